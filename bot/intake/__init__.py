"""Papers coming in from chat: looking links up at arXiv and Crossref, members' suggestions."""

"""The `/paper` commands and the replies they answer with, for every platform."""

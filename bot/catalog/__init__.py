"""The tagged paper catalog: papers, finding and searching them, importing, votes, files."""

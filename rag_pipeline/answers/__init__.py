"""Generated answers checked against the index: their citations, claim by claim (issue 24)."""

"""Sample inputs for the contractions and pairwise distances (see opinfo.py)."""

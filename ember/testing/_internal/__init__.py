"""Test helpers shared by ember's tests and by users testing their own ops and subclasses."""

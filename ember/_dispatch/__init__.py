"""``torch._dispatch``'s paths: ``python`` (the Python dispatcher and ``OpOverload.py_impl``)."""

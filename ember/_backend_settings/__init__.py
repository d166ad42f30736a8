"""The ``torch.backends`` switches for backends ember does not have (``cudnn``, ``cuda``,
``mps``, ``opt_einsum``): public as ``ember.backends.<name>`` (NOTE [torch.backends switches]
in ``ember/backends/__init__.py``)."""

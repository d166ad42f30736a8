"""What PyTorch's ``torch._export`` offers that subclass code imports. ember has no export:
only the markers (``wrappers.mark_subclass_constructor_exportable_experimental``)."""

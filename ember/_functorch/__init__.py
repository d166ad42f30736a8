"""``ember._functorch``: the module paths PyTorch users import AOTAutograd from
(``torch._functorch.aot_autograd``, ``.partitioners``, and ``functorch.compile`` as
``ember._functorch.compile``); everything lives in ``ember.aot``."""

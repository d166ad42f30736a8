"""``ember.fx``, as ``torch.fx``: so far ``operator_schemas`` (argument normalisation); the
graph IR (``Graph``, ``Node``, ``GraphModule``, ``Interpreter``) is still to come."""

from ember.fx import operator_schemas

"""``ember.fx.experimental``: tracing into ``ember.fx`` graphs (``proxy_tensor.make_fx``)."""

"""Meta rules: shapes and dtypes with no data. Importing this package registers them."""

import ember.backends.meta.activation
import ember.backends.meta.attention
import ember.backends.meta.backward
import ember.backends.meta.complex
import ember.backends.meta.copies
import ember.backends.meta.creation
import ember.backends.meta.fft
import ember.backends.meta.histogram
import ember.backends.meta.indexing
import ember.backends.meta.lapack
import ember.backends.meta.ldl
import ember.backends.meta.linalg
import ember.backends.meta.loss
import ember.backends.meta.lu
import ember.backends.meta.nn
import ember.backends.meta.pointwise
import ember.backends.meta.products
import ember.backends.meta.random
import ember.backends.meta.reductions
import ember.backends.meta.rnn
import ember.backends.meta.scatter_reduce
import ember.backends.meta.sorting
import ember.backends.meta.spatial
import ember.backends.meta.variants  # after the families: derives the in-place/out variants
import ember.backends.meta.views

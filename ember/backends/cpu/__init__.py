"""CPU kernels: NumPy. Importing this package registers every CPU kernel."""

import ember.backends.cpu.activation
import ember.backends.cpu.attention
import ember.backends.cpu.backward
import ember.backends.cpu.complex
import ember.backends.cpu.copies
import ember.backends.cpu.creation
import ember.backends.cpu.fft
import ember.backends.cpu.histogram
import ember.backends.cpu.indexing
import ember.backends.cpu.lapack
import ember.backends.cpu.ldl
import ember.backends.cpu.linalg
import ember.backends.cpu.loss
import ember.backends.cpu.lu
import ember.backends.cpu.nn
import ember.backends.cpu.pointwise
import ember.backends.cpu.products
import ember.backends.cpu.random
import ember.backends.cpu.reductions
import ember.backends.cpu.rnn
import ember.backends.cpu.scatter_reduce
import ember.backends.cpu.shell_dtypes
import ember.backends.cpu.sorting
import ember.backends.cpu.spatial
import ember.backends.cpu.special
import ember.backends.cpu.variants  # after the families: derives the in-place/out variants
import ember.backends.cpu.views
from ember.backends.cpu.layout import lay_out_pointwise
from ember.backends.cpu.shell_dtypes import refuse_shell_kernels

lay_out_pointwise()  # last: wraps the pointwise kernels registered above
refuse_shell_kernels()  # NOTE [shell unsigned dtypes]: after every kernel is registered

"""Sample inputs, one file per op family; importing this package registers them all (every
module in this folder, in name order)."""

import importlib
import pkgutil

for _family in pkgutil.iter_modules(__path__):
    importlib.import_module(f"{__name__}.{_family.name}")

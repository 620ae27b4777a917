"""Toy ptbench plugins. Importing this package (ptbench does, through the `ptbench.plugins` entry
point) imports each module beside it; each registers its plugin where ptbench's own are registered."""

import importlib
import pkgutil

for _module in pkgutil.iter_modules(__path__):
    importlib.import_module(f"{__name__}.{_module.name}")

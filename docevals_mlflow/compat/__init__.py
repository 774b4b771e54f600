"""Compatibility surfaces for the libraries this package replaces.

:mod:`docevals_mlflow.compat.visual_evals` keeps the public names, keyword arguments
and result shapes of the seed library ``visual_evals`` 0.1.0, so code written for it
runs with only the import changed. Nothing inside the package imports from here.
"""

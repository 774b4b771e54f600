"""Schema importers: the IDP configuration format, JSON Schema with evaluation
extensions, and schema inference from ground-truth documents.

* :mod:`.idp` imports the IDP configuration format (``classes → attributes``).
* :mod:`.json_schema` imports JSON Schema with ``x-aws-idp-evaluation-*`` and
  ``x-aws-stickler-*`` evaluation extensions; :mod:`.json_refs` resolves its ``$ref`` s
  and nullable forms, :mod:`.json_rules` reads the extension keys.
* :mod:`.inference` infers a class schema from ground-truth documents (the IDP rules).
* :mod:`.common` holds the helpers and constants they share.

Each submodule's docstring records the choices made where its format is loose.
"""

from docevals_mlflow.fields.importers.common import IDP_DEFAULT_MATCH_THRESHOLD
from docevals_mlflow.fields.importers.idp import looks_like_idp_config, schema_from_idp_config
from docevals_mlflow.fields.importers.inference import infer_class_schema
from docevals_mlflow.fields.importers.json_schema import (
    looks_like_json_schema,
    schema_from_json_schema,
)

__all__ = [
    "IDP_DEFAULT_MATCH_THRESHOLD",
    "infer_class_schema",
    "looks_like_idp_config",
    "looks_like_json_schema",
    "schema_from_idp_config",
    "schema_from_json_schema",
]

"""Package layout for setuptools (metadata lives in pyproject.toml).

The wheel carries the ``mae`` package plus two folders a person edits at the top of the repository:
``prompts/`` (agent prompt templates) and ``models/catalog.toml`` (the local model catalog). They are
mapped into the package as ``mae/_bundled/prompts`` and ``mae/_bundled/models``; ``mae.resources``
finds them there in an installed wheel and at the top level in a checkout. The top-level ``models/``
folder is data, not a Python package.
"""

from setuptools import find_namespace_packages, setup

BUNDLED = {"mae._bundled.prompts": "prompts", "mae._bundled.models": "models"}

setup(
    # namespace discovery: mae/ui has no __init__.py
    packages=[
        *find_namespace_packages(
            include=["mae", "mae.*"], exclude=["*.__pycache__", "*.data", "*._bundled*"]
        ),
        *BUNDLED,
    ],
    package_dir=BUNDLED,
    package_data={
        "mae.device.virtual": ["data/*.json", "data/suite/*.json", "data/frontier/*.json"],
        "mae.eval": ["*.json", "data/*.json", "data/frontier/*.json"],
        "mae._bundled.prompts": ["*.md"],
        "mae._bundled.models": ["catalog.toml"],
    },
    exclude_package_data={"mae._bundled.models": ["*.py", "Dockerfile*", "*.yml", "*.yaml", "*.sh"]},
)

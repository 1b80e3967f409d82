"""Stream, consumer and bucket definitions (JSON), shipped inside the package.

``deploy/streams`` links here so operators find them next to the other deploy files.
"""

"""Limits on how far we follow a model, each defined once."""

# Subgraph nesting we follow (a Loop body holding an If holding ...): walks stop there and
# deeper addresses are refused. protobuf's own recursion guard (100 messages, 3 a level) parses
# about 33 levels, so this only bounds models built in memory.
MAX_GRAPH_DEPTH = 64

# Nesting of values we follow: sequences of maps of optionals in data files, a TypeProto's
# element types. Past it a data file is refused and a type shown as unknown.
MAX_DATA_DEPTH = 32

# protobuf can't serialize a message of 2 GiB or more: past this, onnx's C++ checker and shape
# inference (which take the model serialized) can't run, and a model can't be written in one file.
PROTOBUF_LIMIT = 2**31 - 1

# A size given to a dim (Run's and Costs' "dims", one an edit fixes): past this a model runs at
# nothing (and the cost formulas' checks overflow).
MAX_DIM_SIZE = 10**12

# A run's tensor outputs kept in the blob store for a whole download (the answer holds only the
# first values of each): past this many bytes in one run, the rest are not kept. Kept outputs
# are blobs nothing references: the collector removes them once COLLECT_GRACE_SECONDS have passed.
RUN_OUTPUTS_KEPT_BYTES = 1 << 30

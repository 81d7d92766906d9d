"""bench/gpu's modules: the tool's JSON read through one adapter (tool_json), the device
correctness matrix (correctness), the torch column (torch_column), the machine's description
(machine) and the report (report, charts). Python 3 standard library only; torch and matplotlib
are imported only where they are used, and only when present."""

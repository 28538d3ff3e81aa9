"""The runner behind ./ladder (scripts/ladder.py is its command line).

  stages.py    the ladder: its stages (as CMakeLists.txt lists them), their files, binaries and what each accepts
  values.py    the values the commands take (sizes, counts, stage options), checked before anything is built
  results.py   running a stage binary and reading its rows; tables; result files
  reader.py    the reader's commands: run, test, diff, try
  studies.py   the measurement studies the docs are built from: measure, profile, mutants, sweep, probe

Only the Python standard library is used (and git, for the experiments kept as patches).
"""

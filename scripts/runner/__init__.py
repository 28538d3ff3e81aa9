"""The runner behind ./ladder (scripts/ladder.py is its command line).

  stages.py      the ladder: its stages (the NN_name folders), their files and programs, and what each program says of
                 itself (--describe: role, regimes, combines, options)
  results.py     running a stage program and reading its rows; tables; result files
  reader.py      the reader's commands: run, test, diff, try (and the stage options checked by the programs)
  ladder_run.py  run's rows and tables (the docs show them too)
  tries.py       try: copies of a stage changed by a constant, an option or a patch, beside the stage
  own.py         try STAGE mine.cu: a reader's own file through the stage's checks, and the planted copies the tests
                 and docs/own.md use
  studies.py     sweep, probe, mutants
  measure.py     measure: everything the docs are built from, in parts
  profile.py     profile: Nsight Compute counters, the saved machine code, the sanitizer reports

Only the Python standard library is used (and git, for the experiments kept as patches).
"""

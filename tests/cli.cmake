# The stage programs' command lines: no GPU, bad values, help, version (label cpu: none needs a GPU).

# Without a GPU every stage says so in one line and exits 77 (CUDA_VISIBLE_DEVICES=-1 hides any GPU).
get_property(stages GLOBAL PROPERTY LADDER_STAGES)
foreach(stage ${stages})
  ladder_expect(${stage}.no_gpu ${stage} EXIT 77 OUTPUT "^${stage}: no usable GPU: .*compute capability 7.5"
                ENV "CUDA_VISIBLE_DEVICES=-1")
endforeach()

# Bad command lines: one line naming the option, exit 2, before any GPU is touched.
ladder_expect(cli.bad_block 02_grid_stride EXIT 2 OUTPUT "error: --block 96: 02_grid_stride runs power-of-two blocks from 64 to 1024" ARGS --block 96)
ladder_expect(cli.zero_size 03_padding EXIT 2 OUTPUT "error: -n/--size 0 is out of range" ARGS -n 0)
ladder_expect(cli.text_size 04_warp_unroll EXIT 2 OUTPUT "error: -n/--size 'lots' is not a size" ARGS -n lots)
ladder_expect(cli.negative_reps 05_shuffle EXIT 2 OUTPUT "error: --reps -3 is out of range: give a whole number from 1 to 100000" ARGS --reps -3)
# One voice for every bad command line: the option, the value, what is accepted; conflicts refused.
ladder_expect(cli.negative_seed 02_grid_stride EXIT 2 OUTPUT "error: --seed -1 is out of range: give a whole number from 0 to" ARGS --seed -1)
ladder_expect(cli.negative_grid 07_multiblock EXIT 2 OUTPUT "error: --grid -1 is out of range: give a whole number from 0 to 2\\^31-1" ARGS --grid -1)
ladder_expect(cli.huge_size 02_grid_stride EXIT 2 OUTPUT "error: -n/--size 1e20 is out of range: sizes run from 1 to 2\\^36" ARGS -n 1e20)
ladder_expect(cli.large_size 02_grid_stride EXIT 2 OUTPUT "error: -n/--size 100000000000 is out of range: sizes run from 1 to 2\\^36" ARGS -n 1e11)
ladder_expect(cli.unknown_option 03_padding EXIT 2 OUTPUT "error: --bogus: 03_padding has no such option" ARGS --bogus)
ladder_expect(cli.missing_value 03_padding EXIT 2 OUTPUT "error: --reps needs a value" ARGS --reps)
ladder_expect(cli.range_overflow 02_grid_stride EXIT 2 OUTPUT "error: -n/--size [0-9]+ is out of range" ARGS -n 1..9223372036854775808)
set_tests_properties(cli.range_overflow PROPERTIES TIMEOUT 20)
ladder_expect(cli.largest_seed 02_grid_stride EXIT 77 OUTPUT "no usable GPU" ARGS --seed 18446744073709551615
              ENV "CUDA_VISIBLE_DEVICES=-1")
ladder_expect(cli.empty_value 02_grid_stride EXIT 2 OUTPUT "error: --determinism needs a value" ARGS --determinism=)
ladder_expect(cli.option_twice 03_padding EXIT 2 OUTPUT "error: --reps is given twice: give it once" ARGS --reps 3 --reps 4)
ladder_expect(cli.stray_argument 03_padding EXIT 2 OUTPUT "error: 'stray': 03_padding takes options only" ARGS stray)
ladder_expect(cli.bad_choice 04_warp_unroll EXIT 2 OUTPUT "error: --input 'double' is not one of float, exact" ARGS --input double)
ladder_expect(cli.hot_and_flush 04_warp_unroll EXIT 2 OUTPUT "error: --hot and --flush: give one" ARGS --hot --flush clean)
ladder_expect(cli.gemm_size_and_m 08_gemm_tiled EXIT 2 OUTPUT "error: --size sets M = N = K at once" ARGS --size 100 -m 50)
ladder_expect(cli.gemm_no_determinism 08_gemm_tiled EXIT 2 OUTPUT "error: --determinism: 08_gemm_tiled has no such option" ARGS --determinism 5)
ladder_expect(cli.gemm_tile 08_gemm_tiled EXIT 2 OUTPUT "error: --tile '8' is not one of 16, 32" ARGS --tile 8)
ladder_expect(cli.help_08 08_gemm_tiled EXIT 0 OUTPUT "--pad" REJECT "reduction|--determinism" ARGS --help)
ladder_expect(cli.version 06_float4 EXIT 0 OUTPUT "^06_float4: cuda-ladder [0-9]+\\.[0-9]+ \\(commit " ARGS --version)
ladder_expect(cli.tree_only 01_naive EXIT 2 OUTPUT "error: --regime stream: 01_naive has no grid-stride loop" ARGS --regime stream)
ladder_expect(cli.combine 06_float4 EXIT 2 OUTPUT "error: --combine 'atomic': 06_float4 combines partial sums by relaunch only" ARGS --combine atomic)
# One message for a misspelt combine and for one the stage does not have.
ladder_expect(cli.combine_misspelt_06 06_float4 EXIT 2 OUTPUT "error: --combine 'twopass': 06_float4 combines partial sums by relaunch only " ARGS --combine twopass)
ladder_expect(cli.grid_in_tree 07_multiblock EXIT 2 OUTPUT "error: --grid 64: the tree regime" ARGS --regime tree --grid 64)
ladder_expect(cli.gemm_dim 08_gemm_tiled EXIT 2 OUTPUT "error: -k 'x' is not a whole number" ARGS -k x)
ladder_expect(cli.help 07_multiblock EXIT 0 OUTPUT "--combine NAME\\|LIST[= ].?atomic.*Examples:.*07_multiblock --self-test full.*Exit status: 0 pass" REJECT "TEXT" ARGS --help)
# CLI11 prints a default as =2^28 or [2^28] by version; no bracket in the pattern (CMake lists group [ ... ]).
ladder_expect(cli.help_value_names 02_grid_stride EXIT 0 OUTPUT "-n,--size N\\|LIST\\|RANGE( .|=)2\\^28.*--block B\\|LIST.*--grid G( .|=)0.*--reps N( .|=)50" REJECT "TEXT" ARGS --help)
# A stage's help lists only the options it has: 01 has no stream regime and one combine.
ladder_expect(cli.help_01 01_naive EXIT 0 OUTPUT "--block" REJECT "--regime|--grid|--combine" ARGS --help)
ladder_expect(cli.help_06 06_float4 EXIT 0 OUTPUT "--regime" REJECT "--combine|two-pass" ARGS --help)
ladder_expect(cli.bad_regime 05_shuffle EXIT 2 OUTPUT "error: --regime 'fast' is not one of stream, tree" ARGS --regime stream,fast)

# The small things every stage says the same way (issue 21, item 7).
ladder_expect(cli.combine_07_relaunch 07_multiblock EXIT 2
              OUTPUT "error: --combine 'relaunch': 07_multiblock combines partial sums by atomic, last-block, two-pass \\(a list of them, or all\\)"
              REJECT "has the other strategies" ARGS --combine relaunch)
ladder_expect(cli.combine_unknown_06 06_float4 EXIT 2 OUTPUT "error: --combine 'foo': 06_float4 combines partial sums by relaunch only \\("
              ARGS --combine foo)
ladder_expect(cli.combine_unknown_07 07_multiblock EXIT 2
              OUTPUT "error: --combine 'foo': 07_multiblock combines partial sums by atomic, last-block, two-pass \\(a list of them, or all\\)" ARGS --combine foo)
ladder_expect(cli.gemm_help_ranges 08_gemm_tiled EXIT 0 OUTPUT "-m M.*1 to 1000000.*-n N.*1 to 1000000.*-k K.*1 to 1000000"
              ARGS --help)
ladder_expect(cli.gemm_not_a_number 08_gemm_tiled EXIT 2 OUTPUT "error: -m 'big' is not a whole number: give one from 1 to 1000000"
              ARGS -m big)
ladder_expect(cli.reversed_range 02_grid_stride EXIT 2
              OUTPUT "error: -n/--size '2\\^10..2\\^5' runs backwards: a range goes from the smaller power of two up \\(2\\^5..2\\^10\\)"
              ARGS -n 2^10..2^5)
ladder_expect(cli.range_not_powers 02_grid_stride EXIT 2 OUTPUT "error: -n/--size '3..9': a range a..b doubles" ARGS -n 3..9)

# A size that cannot fit: how many bytes it needs and how many are free (needs the GPU to know).
ladder_expect(02_grid_stride.too_large 02_grid_stride GPU EXIT 2
              OUTPUT "error: -n 68719476736: needs [0-9]+ bytes .* of device memory .* but only [0-9]+ bytes .* are free"
              ARGS -n 2^36 --check-only)

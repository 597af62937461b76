# From the repository root at fb50f9c (scratch/rev), on one H100 (nvidia-h100-x1):
#   sh build-aux/git-rev . > scratch/rev; cp docs/device/*.sh scratch/
#   run: bash scratch/callS.sh
#   carry: .devdeps2 scratch/call_lib.sh scratch/callS.sh scratch/rev scratch/sqbin
bash scratch/callS.sh

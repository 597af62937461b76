# From the repository root at ba5566a (scratch/rev), on one H100 (nvidia-h100-x1):
#   sh build-aux/git-rev . > scratch/rev; cp docs/device/*.sh scratch/
#   carry: .devdeps2 scratch/call_lib.sh scratch/callS.sh scratch/rev scratch/sqbin
rm -rf /tmp/b /tmp/r && bash scratch/callS.sh

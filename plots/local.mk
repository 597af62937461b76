# plots/local.mk: filled in by the plots stage

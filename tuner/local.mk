# tuner/local.mk: filled in by the tuner stage

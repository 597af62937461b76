# db/local.mk: filled in by the db stage

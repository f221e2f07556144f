# The Rust crate (bindings/rust): `make rust` builds it and its example programs with
# `cargo build --offline` into $(OUT)/rust (CARGO_TARGET_DIR), so the tree stays clean.
# cargo is no Debian package here: the one on PATH, else rustup's (~/.cargo/bin), else
# CARGO=/path/to/cargo. `make check` builds it when cargo is found; test_rust fails,
# saying so, when it is not.
CARGO ?= $(firstword $(shell command -v cargo 2>/dev/null) $(wildcard $(HOME)/.cargo/bin/cargo \
	/root/.cargo/bin/cargo))
RUST_MANIFEST := bindings/rust/Cargo.toml
RUST_OUT := $(abspath $(OUT)/rust)

.PHONY: rust
rust:
	$(Q)if [ -z "$(CARGO)" ] || [ ! -x "$(CARGO)" ]; then \
		echo "make rust: cargo not found (PATH, ~/.cargo/bin): install Rust (rustup) or set CARGO=/path/to/cargo" >&2; \
		exit 1; fi
	$(call msg,CARGO,$(OUT)/rust/release/examples)
	$(Q)CARGO_TARGET_DIR=$(RUST_OUT) $(CARGO) build --offline --release --quiet --examples \
		--manifest-path $(RUST_MANIFEST)
	$(call msg,CARGO,$(OUT)/rust/bfd/release/examples/markers)
	$(Q)CARGO_TARGET_DIR=$(RUST_OUT)/bfd RUSTFLAGS="-C linker-features=-lld" $(CARGO) build \
		--offline --release --quiet --example markers --manifest-path $(RUST_MANIFEST)

# make check: the crate when cargo is there (test_rust says what is missing otherwise).
RUST_CHECK_BUILD := $(if $(CARGO),rust)

//! Porthole sidecar.

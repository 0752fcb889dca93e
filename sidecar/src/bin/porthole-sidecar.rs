//! `porthole-sidecar`: the Porthole server process (see docs/protocol.md §1).

fn main() {
    let opts = match sidecar::cli::parse(std::env::args().skip(1)) {
        Ok(o) => o,
        Err(sidecar::cli::CliError::Help) => {
            eprintln!("{}", sidecar::cli::USAGE);
            std::process::exit(0);
        }
        Err(e) => {
            eprintln!("porthole-sidecar: {e}\n{}", sidecar::cli::USAGE);
            std::process::exit(2);
        }
    };
    if opts.print_default_config {
        print!("{}", sidecar::config::DEFAULT_FILE);
        std::process::exit(0);
    }
    if let Err(e) = sidecar::logging::init(opts.log_file.as_deref()) {
        eprintln!("porthole-sidecar: cannot open log file: {e}");
        std::process::exit(2);
    }
    let rt = match tokio::runtime::Builder::new_multi_thread().enable_all().build() {
        Ok(rt) => rt,
        Err(e) => {
            eprintln!("porthole-sidecar: cannot start the runtime: {e}");
            std::process::exit(1);
        }
    };
    if opts.remote_attach {
        // The relay's stdout is the tunnel: nothing else may be printed there.
        let code = match rt.block_on(sidecar::remote::relay::attach()) {
            Ok(()) => 0,
            Err(e) => {
                eprintln!("porthole-sidecar --remote-attach: {e}");
                1
            }
        };
        std::process::exit(code);
    }
    let run = async move {
        if opts.remote_daemon {
            sidecar::run_remote_daemon(opts).await
        } else {
            sidecar::run(opts).await
        }
    };
    let code = match rt.block_on(run) {
        Ok(()) => 0,
        Err(e) => {
            tracing::error!("{e}");
            1
        }
    };
    // Exit now: connection tasks and PTY threads need no orderly teardown (every child has
    // been killed and reaped by `run`).
    std::process::exit(code);
}

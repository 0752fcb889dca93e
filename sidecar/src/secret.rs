//! Random secrets: the one leaf every owner of a token (API auth, pane tokens, viewer grants)
//! draws from, so `control` needs nothing of `api` to mint one.

/// 32 bytes from the OS CSPRNG (`getrandom`) as 64 lowercase hex characters.
///
/// Errors: the OS generator failed (`getrandom::Error`); no weaker source is tried.
pub fn random_hex_256() -> Result<String, getrandom::Error> {
    let mut b = [0u8; 32];
    getrandom::fill(&mut b)?;
    Ok(b.iter().map(|x| format!("{x:02x}")).collect())
}

//! The bearer token: required on every route but `/healthz` when the server has one, compared in constant
//! time (both sides hashed first, so neither the content nor the length leaks through timing).

use axum::extract::{Request, State};
use axum::http::{StatusCode, header};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use sha2::{Digest, Sha256};

use super::api_error::ApiError;
use super::routes::AppState;

/// Lets the request through when it carries the server's token (or the server has none).
pub async fn require_token(State(state): State<AppState>, request: Request, next: Next) -> Response {
    let Some(token) = state.token.as_deref() else { return next.run(request).await };
    let given = request
        .headers()
        .get(header::AUTHORIZATION)
        .and_then(|value| value.to_str().ok())
        .and_then(|value| value.strip_prefix("Bearer "));
    match given {
        None => ApiError::new(
            StatusCode::UNAUTHORIZED,
            "missing_token",
            "this server needs a token: send `Authorization: Bearer <token>`",
        )
        .into_response(),
        Some(given) if !same_secret(given.trim(), token) => {
            ApiError::new(StatusCode::UNAUTHORIZED, "wrong_token", "the token does not match the server's")
                .into_response()
        }
        Some(_) => next.run(request).await,
    }
}

/// Whether two secrets are equal, in time that depends on neither.
pub fn same_secret(given: &str, expected: &str) -> bool {
    let (given, expected) = (Sha256::digest(given.as_bytes()), Sha256::digest(expected.as_bytes()));
    given.iter().zip(expected.iter()).fold(0u8, |difference, (a, b)| difference | (a ^ b)) == 0
}

#[cfg(test)]
mod tests {
    use super::same_secret;

    #[test]
    fn only_the_same_secret_matches() {
        assert!(same_secret("s3cret", "s3cret"));
        assert!(!same_secret("s3cret", "s3creT"));
        assert!(!same_secret("s3cre", "s3cret"));
        assert!(!same_secret("", "s3cret"));
    }
}

//! From a URL and options to an `object_store` store and the object's path in it.

use std::sync::Arc;

use object_store::aws::{AmazonS3Builder, AmazonS3ConfigKey};
use object_store::azure::{AzureConfigKey, MicrosoftAzureBuilder};
use object_store::gcp::{GoogleCloudStorageBuilder, GoogleConfigKey};
use object_store::http::HttpBuilder;
use object_store::multipart::MultipartStore;
use object_store::path::Path;
use object_store::{BackoffConfig, ClientConfigKey, ObjectStore, RetryConfig};

use crate::{StoreError, StoreOptions};

/// The kinds of store a URL can name.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Scheme {
    S3,
    Gcs,
    Azure,
    Http,
}

/// The store kind of `text`, if it is a URL of one.
pub(crate) fn scheme_of(text: &str) -> Option<Scheme> {
    let (scheme, rest) = text.split_once("://")?;
    if rest.is_empty() {
        return None;
    }
    match scheme.to_ascii_lowercase().as_str() {
        "s3" | "s3a" => Some(Scheme::S3),
        "gs" | "gcs" => Some(Scheme::Gcs),
        "az" | "azure" | "abfs" | "abfss" => Some(Scheme::Azure),
        "http" | "https" => Some(Scheme::Http),
        _ => None,
    }
}

fn bad(url: &str, reason: impl Into<String>) -> StoreError {
    StoreError::BadUrl {
        url: url.to_string(),
        reason: reason.into(),
    }
}

fn retry(opts: &StoreOptions) -> RetryConfig {
    RetryConfig {
        backoff: BackoffConfig {
            init_backoff: std::time::Duration::from_millis(50),
            max_backoff: std::time::Duration::from_secs(5),
            base: 2.0,
        },
        max_retries: opts.max_retries,
        retry_timeout: opts
            .timeout
            .saturating_mul(u32::try_from(opts.max_retries + 1).unwrap_or(u32::MAX)),
    }
}

fn secs(d: std::time::Duration) -> String {
    format!("{}ms", d.as_millis())
}

/// `scheme://authority` of a URL (for names in messages).
pub(crate) fn base_of(url: &str) -> String {
    match url::Url::parse(url) {
        Ok(u) => match (u.host_str(), u.port()) {
            (Some(h), Some(p)) => format!("{}://{h}:{p}", u.scheme()),
            (Some(h), None) => format!("{}://{h}", u.scheme()),
            _ => format!("{}://", u.scheme()),
        },
        Err(_) => String::new(),
    }
}

/// The store holding `url`'s object, and the object's path in it.
pub(crate) fn store_for(
    url: &str,
    opts: &StoreOptions,
) -> Result<(Arc<dyn ObjectStore>, Path), StoreError> {
    let (store, _, path) = stores_for(url, opts)?;
    Ok((store, path))
}

/// The store holding `url`'s object as a store of multipart uploads (s3, gs, az), and the
/// object's path in it.
pub(crate) fn multipart_store_for(
    url: &str,
    opts: &StoreOptions,
) -> Result<(Arc<dyn MultipartStore>, Path), StoreError> {
    match stores_for(url, opts)? {
        (_, Some(m), path) => Ok((m, path)),
        _ => Err(bad(
            url,
            "writing needs an s3, gs or az url (multipart uploads)",
        )),
    }
}

/// The store of `url` (and the same as a store of multipart uploads, where it is one).
type Stores = (Arc<dyn ObjectStore>, Option<Arc<dyn MultipartStore>>, Path);

/// Makes ring the process's rustls provider, unless the program chose one: reqwest builds its
/// TLS configuration from that default (asdf-store turns off reqwest's own aws-lc provider),
/// and panics without one.
fn tls_provider() {
    static ONCE: std::sync::Once = std::sync::Once::new();
    ONCE.call_once(|| {
        // An error means another provider is already installed: it is kept.
        let _ = rustls::crypto::ring::default_provider().install_default();
    });
}

fn stores_for(url: &str, opts: &StoreOptions) -> Result<Stores, StoreError> {
    tls_provider();
    let scheme = scheme_of(url).ok_or_else(|| bad(url, "not an s3, gs, az, http or https url"))?;
    let parsed = url::Url::parse(url).map_err(|e| bad(url, e.to_string()))?;
    let path = Path::from_url_path(parsed.path()).map_err(|e| bad(url, e.to_string()))?;
    if path.as_ref().is_empty() {
        return Err(bad(url, "no object path"));
    }
    let timeout = secs(opts.timeout);
    let key_err = |key: &str| StoreError::BadOption {
        key: key.to_string(),
        scheme: parsed.scheme().to_string(),
    };
    let (store, multipart): (Arc<dyn ObjectStore>, Option<Arc<dyn MultipartStore>>) = match scheme {
        Scheme::Http => {
            let host = parsed.host_str().ok_or_else(|| bad(url, "no host"))?;
            let base = match parsed.port() {
                Some(p) => format!("{}://{host}:{p}", parsed.scheme()),
                None => format!("{}://{host}", parsed.scheme()),
            };
            let mut b = HttpBuilder::new()
                .with_url(base)
                .with_retry(retry(opts))
                .with_config(ClientConfigKey::Timeout, timeout)
                .with_config(
                    ClientConfigKey::AllowHttp,
                    (parsed.scheme() == "http").to_string(),
                );
            for (k, v) in &opts.options {
                let key: ClientConfigKey = k.parse().map_err(|_| key_err(k))?;
                b = b.with_config(key, v.clone());
            }
            (
                Arc::new(b.build().map_err(|e| bad(url, e.to_string()))?),
                None,
            )
        }
        Scheme::S3 => {
            let mut b = AmazonS3Builder::from_env()
                .with_url(url)
                .with_retry(retry(opts))
                .with_config(AmazonS3ConfigKey::Client(ClientConfigKey::Timeout), timeout);
            // An endpoint given as http:// (a local or private S3) is meant to be used.
            let endpoint = opts
                .options
                .iter()
                .find(|(k, _)| {
                    matches!(
                        k.parse::<AmazonS3ConfigKey>(),
                        Ok(AmazonS3ConfigKey::Endpoint)
                    )
                })
                .map(|(_, v)| v.clone())
                .or_else(|| std::env::var("AWS_ENDPOINT_URL").ok())
                .or_else(|| std::env::var("AWS_ENDPOINT").ok());
            if endpoint.is_some_and(|e| e.starts_with("http://")) {
                b = b.with_config(
                    AmazonS3ConfigKey::Client(ClientConfigKey::AllowHttp),
                    "true",
                );
            }
            for (k, v) in &opts.options {
                let key: AmazonS3ConfigKey = k.parse().map_err(|_| key_err(k))?;
                b = b.with_config(key, v.clone());
            }
            if opts.anonymous {
                b = b.with_skip_signature(true);
            }
            let s = Arc::new(b.build().map_err(|e| bad(url, e.to_string()))?);
            (s.clone(), Some(s))
        }
        Scheme::Gcs => {
            let mut b = GoogleCloudStorageBuilder::from_env()
                .with_url(url)
                .with_retry(retry(opts))
                .with_config(GoogleConfigKey::Client(ClientConfigKey::Timeout), timeout);
            for (k, v) in &opts.options {
                let key: GoogleConfigKey = k.parse().map_err(|_| key_err(k))?;
                b = b.with_config(key, v.clone());
            }
            if opts.anonymous {
                b = b.with_skip_signature(true);
            }
            let s = Arc::new(b.build().map_err(|e| bad(url, e.to_string()))?);
            (s.clone(), Some(s))
        }
        Scheme::Azure => {
            let mut b = MicrosoftAzureBuilder::from_env()
                .with_url(url)
                .with_retry(retry(opts))
                .with_config(AzureConfigKey::Client(ClientConfigKey::Timeout), timeout);
            for (k, v) in &opts.options {
                let key: AzureConfigKey = k.parse().map_err(|_| key_err(k))?;
                b = b.with_config(key, v.clone());
            }
            if opts.anonymous {
                b = b.with_skip_signature(true);
            }
            let s = Arc::new(b.build().map_err(|e| bad(url, e.to_string()))?);
            (s.clone(), Some(s))
        }
    };
    Ok((store, multipart, path))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn schemes() {
        assert_eq!(scheme_of("s3://b/k.asdf"), Some(Scheme::S3));
        assert_eq!(scheme_of("HTTPS://h/p"), Some(Scheme::Http));
        assert_eq!(scheme_of("gs://b/k"), Some(Scheme::Gcs));
        assert_eq!(scheme_of("az://c/k"), Some(Scheme::Azure));
        assert_eq!(scheme_of("file.asdf"), None);
        assert_eq!(scheme_of("ftp://h/p"), None);
        assert_eq!(scheme_of("s3://"), None);
    }

    #[test]
    fn bad_urls_are_typed_errors() {
        let o = StoreOptions::default();
        assert!(matches!(
            store_for("http://h", &o),
            Err(StoreError::BadUrl { .. })
        ));
        assert!(matches!(
            store_for("notaurl", &o),
            Err(StoreError::BadUrl { .. })
        ));
        assert!(matches!(
            store_for("http://h/x", &o.clone().option("no_such_key", "1")),
            Err(StoreError::BadOption { .. })
        ));
    }
}

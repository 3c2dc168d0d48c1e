//! shamhub, git-spice's offline forge, through its REST API at `SHAMHUB_API_URL` (git-spice
//! v0.31.2, `internal/forge/shamhub/`): a token from `POST /login {"username"}` (the user in
//! `SHAMHUB_USERNAME`, as `gs auth login` takes it), sent as `Authentication-Token`; comments
//! from `GET /{owner}/{repo}/comments?change=N` a page at a time (`offset`, `limit`, `hasMore`);
//! checks from `GET /{owner}/{repo}/change/N/checks`, each `pending`, `passed` or `failed`.

use std::cell::OnceCell;
use std::time::Duration;

use serde::Deserialize;
use serde::de::DeserializeOwned;

use super::{Check, CheckState, Comment, Forge, ForgeEnv, ForgeError};

/// A slow answer is a failure to report, not a reason to hang a poll.
const TIMEOUT: Duration = Duration::from_secs(20);

/// Comments asked for per page (shamhub's default is 10).
const PAGE: usize = 50;

pub struct Shamhub {
    api: String,
    owner: String,
    name: String,
    username: String,
    agent: ureq::Agent,
    token: OnceCell<String>,
}

#[derive(Deserialize)]
struct Login {
    token: String,
}

#[derive(Deserialize)]
struct CommentPage {
    #[serde(default)]
    items: Vec<RawComment>,
    #[serde(default)]
    offset: usize,
    #[serde(default, rename = "hasMore")]
    has_more: bool,
}

#[derive(Deserialize)]
struct RawComment {
    id: u64,
    body: String,
}

#[derive(Deserialize)]
struct Checks {
    #[serde(default)]
    checks: Vec<RawCheck>,
}

#[derive(Deserialize)]
struct RawCheck {
    name: String,
    state: String,
}

impl Shamhub {
    pub fn new(env: &ForgeEnv, owner: String, name: String) -> Result<Shamhub, ForgeError> {
        let api =
            env.shamhub_api_url.clone().ok_or(ForgeError::NotConfigured { variable: "SHAMHUB_API_URL" })?;
        let username =
            env.shamhub_username.clone().ok_or(ForgeError::NotConfigured { variable: "SHAMHUB_USERNAME" })?;
        let config = ureq::Agent::config_builder()
            .timeout_global(Some(TIMEOUT))
            // shamhub runs on loopback: a proxy from the environment would only get in the way.
            .proxy(None)
            .http_status_as_error(false)
            .build();
        Ok(Shamhub {
            api: api.trim_end_matches('/').to_owned(),
            owner,
            name,
            username,
            agent: ureq::Agent::new_with_config(config),
            token: OnceCell::new(),
        })
    }

    fn token(&self) -> Result<&str, ForgeError> {
        if let Some(token) = self.token.get() {
            return Ok(token);
        }
        let url = format!("{}/login", self.api);
        let request = serde_json::json!({ "username": self.username }).to_string();
        let response =
            self.agent.post(&url).header("Content-Type", "application/json").send(request.as_str());
        let login: Login = read(&url, response)?;
        Ok(self.token.get_or_init(|| login.token))
    }

    fn get<T: DeserializeOwned>(&self, path_and_query: &str) -> Result<T, ForgeError> {
        let url = format!("{}/{}/{}/{path_and_query}", self.api, self.owner, self.name);
        let response = self.agent.get(&url).header("Authentication-Token", self.token()?).call();
        read(&url, response)
    }
}

fn read<T: DeserializeOwned>(
    url: &str,
    response: Result<ureq::http::Response<ureq::Body>, ureq::Error>,
) -> Result<T, ForgeError> {
    let http = |detail: String| ForgeError::Http { url: url.to_owned(), detail };
    let mut response = response.map_err(|err| http(err.to_string()))?;
    let status = response.status();
    let body = response.body_mut().read_to_string().map_err(|err| http(err.to_string()))?;
    if !status.is_success() {
        return Err(http(format!("{status}: {}", body.trim())));
    }
    serde_json::from_str(&body).map_err(|err| http(format!("{err} in {body:?}")))
}

impl Forge for Shamhub {
    fn kind(&self) -> &'static str {
        "shamhub"
    }

    fn repository(&self) -> String {
        format!("{}/{}", self.owner, self.name)
    }

    fn comments(&self, change: u64) -> Result<Vec<Comment>, ForgeError> {
        let mut comments = Vec::new();
        let mut offset = 0;
        loop {
            let page: CommentPage =
                self.get(&format!("comments?change={change}&offset={offset}&limit={PAGE}"))?;
            let got = page.items.len();
            comments.extend(page.items.into_iter().map(|c| Comment { id: c.id.to_string(), body: c.body }));
            // A server that claims more but moves nothing on would loop forever.
            if !page.has_more || got == 0 || page.offset <= offset {
                break;
            }
            offset = page.offset;
        }
        comments.retain(|comment| !comment.is_navigation());
        Ok(comments)
    }

    fn checks(&self, change: u64) -> Result<Option<Vec<Check>>, ForgeError> {
        let checks: Checks = self.get(&format!("change/{change}/checks"))?;
        if checks.checks.is_empty() {
            return Ok(None);
        }
        let state = |state: &str| match state {
            "passed" => CheckState::Passed,
            "failed" => CheckState::Failed,
            // shamhub has only these three; anything new is not an end yet.
            _ => CheckState::Pending,
        };
        Ok(Some(
            checks
                .checks
                .into_iter()
                .map(|check| Check { state: state(&check.state), name: check.name, link: None })
                .collect(),
        ))
    }
}

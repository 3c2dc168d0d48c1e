//! Variables that tell a program where a daemon of your session listens, one that runs commands
//! or acts with your rights for whoever connects. `wt sandbox` removes them from the command's
//! environment whatever `unix_sockets` says: with `deny` the filter refuses the socket anyway
//! and this keeps tools from trying (git does not offer your ssh-agent's keys, a test suite does
//! not find a tmux or a docker to drive); with `allow` a task should still not stumble into your
//! terminal or your keys. Removing a name does not hide a daemon at its default path
//! (`/tmp/tmux-<uid>/default`, `/run/user/<uid>/bus`, `/var/run/docker.sock`): only the filter
//! shuts those.
//!
//! Left alone: `XDG_RUNTIME_DIR` (it holds those sockets but also where programs keep their
//! runtime files), `DISPLAY` and `WAYLAND_DISPLAY` (test suites under Xvfb need them; an X
//! server is reached through Unix sockets, which the filter refuses, or abstract ones, which
//! Landlock scopes).

/// Each variable and the daemon it leads to.
pub const DAEMON_VARIABLES: &[(&str, &str)] = &[
    ("TMUX", "the tmux server: `tmux new-window` runs any command"),
    ("TMUX_PANE", "the tmux pane wt runs in"),
    ("STY", "the screen session: `screen -X stuff` types any command into it"),
    ("ZELLIJ_SESSION_NAME", "the zellij session: `zellij run` runs any command"),
    ("DBUS_SESSION_BUS_ADDRESS", "the session bus: `systemd-run --user` starts any command"),
    ("DBUS_SYSTEM_BUS_ADDRESS", "the system bus, when moved from its default"),
    ("DOCKER_HOST", "the docker daemon: a container with your files mounted"),
    ("CONTAINER_HOST", "podman's service, the same"),
    ("SSH_AUTH_SOCK", "ssh-agent: signs with your keys"),
    ("EMACS_SOCKET_NAME", "the Emacs server: `emacsclient --eval` runs any Lisp"),
    ("NVIM", "the Neovim that wt runs in: `nvim --server $NVIM --remote-send`"),
    ("NVIM_LISTEN_ADDRESS", "the same, for older Neovim"),
    ("VSCODE_IPC_HOOK_CLI", "the VS Code window: `code` installs extensions and opens files in it"),
    ("VSCODE_GIT_IPC_HANDLE", "VS Code's git credential helper"),
    ("KITTY_LISTEN_ON", "kitty's remote control: `kitty @ launch` runs any command"),
    ("WEZTERM_UNIX_SOCKET", "WezTerm's mux: `wezterm cli spawn` runs any command"),
    ("ALACRITTY_SOCKET", "Alacritty: `alacritty msg create-window -e` runs any command"),
    ("SWAYSOCK", "sway: `swaymsg exec` runs any command"),
    ("I3SOCK", "i3: `i3-msg exec` runs any command"),
    ("HYPRLAND_INSTANCE_SIGNATURE", "Hyprland: `hyprctl dispatch exec` runs any command"),
];

# SPDX-License-Identifier: Apache-2.0
# cuda-apt.sh — sourced (not run) by the scripts that fetch Debian's
# non-free CUDA packages (fetch-cuda-headers.sh, fetch-cuda-libs.sh): one
# private apt configuration per Debian suite, under the cache, so that the
# system's apt sources are never touched.
#
#   . scripts/cuda-apt.sh
#   conf=$(cuda_apt_config "$CACHE" trixie)   # writes the configuration
#   APT_CONFIG=$conf apt-get -qq update
#
# The configuration holds one source (the suite's non-free component of the
# Debian archive scripts/apt-mirror.sh names, binary amd64 only), its own
# lists, cache, state and an empty dpkg status, in
# $CACHE/apt-cuda/<suite>/ (the layout fetch-cuda-headers.sh always used).

CUDA_APT_KEYRING=/usr/share/keyrings/debian-archive-keyring.gpg

# cuda_apt_config <cache> <suite>: writes <cache>/apt-cuda/<suite>/apt.conf
# (and the folders it names) and prints its path.
cuda_apt_config() {
    _aptdir=$1/apt-cuda/$2
    _mirror=$("$(dirname "$0")/apt-mirror.sh")
    mkdir -p "$_aptdir/sources.list.d" "$_aptdir/preferences.d" "$_aptdir/state" \
        "$_aptdir/lists/partial" "$_aptdir/cache/archives/partial"
    : >"$_aptdir/status"
    : >"$_aptdir/preferences"
    printf 'deb [signed-by=%s] %s %s non-free\n' "$CUDA_APT_KEYRING" "$_mirror" "$2" \
        >"$_aptdir/sources.list"
    cat >"$_aptdir/apt.conf" <<CONF
Dir::Etc::SourceList "$_aptdir/sources.list";
Dir::Etc::SourceParts "$_aptdir/sources.list.d";
Dir::Etc::Preferences "$_aptdir/preferences";
Dir::Etc::PreferencesParts "$_aptdir/preferences.d";
Dir::State "$_aptdir/state";
Dir::State::Lists "$_aptdir/lists";
Dir::State::status "$_aptdir/status";
Dir::Cache "$_aptdir/cache";
APT::Architecture "amd64";
#clear APT::Architectures;
APT::Architectures { "amd64"; };
APT::Sandbox::User "root";
Acquire::Languages "none";
CONF
    printf '%s\n' "$_aptdir/apt.conf"
}

# cuda_apt_field <field> <apt-cache show output>: the field's value.
cuda_apt_field() {
    printf '%s\n' "$2" | sed -n "s/^$1: //p"
}

#!/usr/bin/env bash
# Starts a throwaway PostgreSQL 15 on a machine that has none (the GPU machine: Ubuntu, no network),
# from a tarball of Debian's server made by `scripts/gpu-pg.sh --pack OUT.tar.xz` on the CPU machine
# (the binaries keep Debian's layout under root/, with the ICU 72 and OpenLDAP 2.5 libraries Ubuntu
# lacks in root/lib). Prints the URL to use; `scripts/gpu-pg.sh --stop DIR` stops it.
#
#   url=$(scripts/gpu-pg.sh pg.tar.xz /tmp/kevo-pg)
set -euo pipefail
if [ "${1:-}" = --pack ]; then
  out=$(realpath -m "$2"); tmp=$(mktemp -d); r=$tmp/root
  mkdir -p "$r/usr/lib/postgresql/15/lib" "$r/usr/share/postgresql/15/extension" "$r/lib"
  cp -a /usr/lib/postgresql/15/bin "$r/usr/lib/postgresql/15/"
  (cd "$r/usr/lib/postgresql/15/bin" && ls | grep -vE '^(postgres|initdb|pg_ctl|createdb|psql)$' | xargs rm -f)
  for f in plpgsql.so dict_snowball.so libpqwalreceiver.so pgoutput.so; do cp -a "/usr/lib/postgresql/15/lib/$f" "$r/usr/lib/postgresql/15/lib/"; done
  (cd /usr/share/postgresql/15 && cp -a $(ls | grep -vE '^(extension|man)$') "$r/usr/share/postgresql/15/")
  cp /usr/share/postgresql/15/extension/plpgsql* "$r/usr/share/postgresql/15/extension/"
  for l in libpq.so.5 libicui18n.so.72 libicuuc.so.72 libicudata.so.72 libldap-2.5.so.0 liblber-2.5.so.0 libsasl2.so.2; do cp -L "/usr/lib/x86_64-linux-gnu/$l" "$r/lib/"; done
  tar -C "$tmp" -cJf "$out" root && rm -rf "$tmp" && ls -la "$out" >&2
  exit 0
fi
if [ "${1:-}" = --stop ]; then
  d=$2; LD_LIBRARY_PATH=$d/root/lib "$d/root/usr/lib/postgresql/15/bin/pg_ctl" -D "$d/data" -m immediate stop >/dev/null 2>&1 || \
    runuser -u nobody -- env LD_LIBRARY_PATH="$d/root/lib" "$d/root/usr/lib/postgresql/15/bin/pg_ctl" -D "$d/data" -m immediate stop >/dev/null 2>&1 || true
  exit 0
fi
tarball=$(realpath "$1"); d=${2:-/tmp/kevo-pg}
rm -rf "$d" && mkdir -p "$d" && tar -C "$d" -xJf "$tarball"
bin=$d/root/usr/lib/postgresql/15/bin
as=()
if [ "$(id -u)" = 0 ]; then  # PostgreSQL refuses to run as root
  user=$(id -u postgres >/dev/null 2>&1 && echo postgres || echo nobody)
  chown -R "$user" "$d"; chmod 755 "$d"; as=(runuser -u "$user" --)
fi
run() { "${as[@]}" env LD_LIBRARY_PATH="$d/root/lib" "$@"; }
run "$bin/initdb" -D "$d/data" -U postgres -A trust -E UTF8 --locale=C > "$d/initdb.log" 2>&1 || { cat "$d/initdb.log" >&2; exit 1; }
run "$bin/pg_ctl" -D "$d/data" -l "$d/log" -w -o "-k $d -c listen_addresses='' -c max_connections=200" start >/dev/null || { cat "$d/log" >&2; exit 1; }
run "$bin/createdb" -h "$d" -U postgres kevo
echo "postgresql:///kevo?host=$d&user=postgres"

#!/bin/sh
# The real-backend smoke's producer (sh-producer.json): a /bin/sh program role, one XADD per event of
# $RELAB_EVENTS through redis-cli. The events all fall at 0 ms, and relab writes their keys sorted
# (at_ms, order, type, version), which the sed below reads.
set -eu
printf '%s' "$RELAB_EVENTS" | tr '{' '\n' |
  sed -n 's/.*"order": *\([0-9]*\).*"type": *"\([a-z_]*\)".*"version": *\([0-9]*\).*/\1 \2 \3/p' |
  while read -r order type version; do
    redis-cli -u "$RELAB_REDIS_URL" XADD "$RELAB_STREAM" '*' order "$order" type "$type" v "$version" >/dev/null
  done

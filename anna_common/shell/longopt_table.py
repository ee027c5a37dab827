"""Each program's long options, as the program itself lists them (``--help``; ``git SUB -h``).

Data for :mod:`anna_common.shell.longopts`, which expands an abbreviated long option the way
``getopt_long`` (and argp, curl's parser, git's parse-options) does. Taken from coreutils 9.1,
util-linux 2.38, systemd 252, shadow 4.13, pacman 6.0, git 2.39, curl 7.88, GNU tar 1.34 and
wget 1.21; sudo, iptables, modprobe, fdisk and sfdisk from their manual pages. A program
missing here keeps its options as written; an option missing from a program's list can only
make a prefix look unique when it is not, which the program itself then rejects as ambiguous.
"""

from __future__ import annotations

from anna_common.shell.longopt_storage import STORAGE_OPTIONS


def _names(text: str) -> frozenset[str]:
    return frozenset(text.split())


LONG_OPTIONS: dict[str, frozenset[str]] = {
    "cat": _names(
        "help number number-nonblank show-all show-ends show-nonprinting show-tabs "
        "squeeze-blank version"),
    "chcon": _names(
        "dereference help no-dereference no-preserve-root preserve-root range recursive "
        "reference role type user verbose version"),
    "chgrp": _names(
        "changes dereference help no-dereference no-preserve-root preserve-root quiet "
        "recursive reference silent verbose version"),
    "chmod": _names(
        "changes help no-preserve-root preserve-root quiet recursive reference silent "
        "verbose version"),
    "chown": _names(
        "changes dereference from help no-dereference no-preserve-root preserve-root quiet "
        "recursive reference silent verbose version"),
    "chpasswd": _names("crypt-method encrypted help md5 root sha-rounds"),
    "chroot": _names("groups help skip-chdir userspec version"),
    "cp": _names(
        "archive attributes-only backup context copy-contents dereference force help "
        "interactive link no-clobber no-dereference no-preserve no-target-directory "
        "one-file-system parents preserve recursive reflink remove-destination sparse "
        "strip-trailing-slashes suffix symbolic-link target-directory update verbose "
        "version"),
    "curl": _names(
        "abstract-unix-socket alt-svc anyauth append aws-sigv4 basic cacert capath cert "
        "cert-status cert-type ciphers compressed compressed-ssh config connect-timeout "
        "connect-to continue-at cookie cookie-jar create-dirs create-file-mode crlf crlfile "
        "curves data data-ascii data-binary data-raw data-urlencode delegation digest "
        "disable disable-eprt disable-epsv disallow-username-in-url dns-interface "
        "dns-ipv4-addr dns-ipv6-addr dns-servers doh-cert-status doh-insecure doh-url "
        "dump-header egd-file engine etag-compare etag-save expect100-timeout fail "
        "fail-early fail-with-body false-start form form-escape form-string ftp-account "
        "ftp-alternative-to-user ftp-create-dirs ftp-method ftp-pasv ftp-port ftp-pret "
        "ftp-skip-pasv-ip ftp-ssl-ccc ftp-ssl-ccc-mode ftp-ssl-control get globoff "
        "happy-eyeballs-timeout-ms haproxy-protocol head header help hostpubmd5 "
        "hostpubsha256 hsts http0 http1 http2 http2-prior-knowledge http3 http3-only "
        "ignore-content-length include insecure interface ipv4 ipv6 json "
        "junk-session-cookies keepalive-time key key-type krb libcurl limit-rate list-only "
        "local-port location location-trusted login-options mail-auth mail-from mail-rcpt "
        "mail-rcpt-allowfails manual max-filesize max-redirs max-time metalink negotiate "
        "netrc netrc-file netrc-optional next no-alpn no-buffer no-clobber no-keepalive "
        "no-npn no-progress-meter no-sessionid noproxy ntlm ntlm-wb oauth2-bearer output "
        "output-dir parallel parallel-immediate parallel-max pass path-as-is pinnedpubkey "
        "post301 post302 post303 preproxy progress-bar proto proto-default proto-redir "
        "proxy proxy-anyauth proxy-basic proxy-cacert proxy-capath proxy-cert "
        "proxy-cert-type proxy-ciphers proxy-crlfile proxy-digest proxy-header "
        "proxy-insecure proxy-key proxy-key-type proxy-negotiate proxy-ntlm proxy-pass "
        "proxy-pinnedpubkey proxy-service-name proxy-ssl-allow-beast "
        "proxy-ssl-auto-client-cert proxy-tls13-ciphers proxy-tlsauthtype proxy-tlspassword "
        "proxy-tlsuser proxy-tlsv1 proxy-user proxy1 proxytunnel pubkey quote random-file "
        "range rate raw referer remote-header-name remote-name remote-name-all remote-time "
        "remove-on-error request request-target resolve retry retry-all-errors "
        "retry-connrefused retry-delay retry-max-time sasl-authzid sasl-ir service-name "
        "show-error silent socks4 socks4a socks5 socks5-basic socks5-gssapi "
        "socks5-gssapi-nec socks5-gssapi-service socks5-hostname speed-limit speed-time ssl "
        "ssl-allow-beast ssl-auto-client-cert ssl-no-revoke ssl-reqd ssl-revoke-best-effort "
        "sslv2 sslv3 stderr styled-output suppress-connect-headers tcp-fastopen tcp-nodelay "
        "telnet-option tftp-blksize tftp-no-options time-cond tls-max tls13-ciphers "
        "tlsauthtype tlspassword tlsuser tlsv1 tr-encoding trace trace-ascii trace-time "
        "unix-socket upload-file url url-query use-ascii user user-agent verbose version "
        "write-out xattr"),
    "date": _names(
        "date debug file help iso-8601 reference resolution rfc-3339 rfc-email set "
        "universal utc version"),
    "dd": _names("help version"),
    "dmesg": _names(
        "buffer-size clear color console-level console-off console-on ctime decode facility "
        "file follow follow-new force-prefix help human json kernel level noescape nopager "
        "notime raw read-clear reltime show-delta since syslog time-format until userspace "
        "version"),
    "env": _names(
        "block-signal chdir debug default-signal help ignore-environment ignore-signal "
        "list-signal-handling null split-string unset version"),
    "flock": _names(
        "close command conflict-exit-code exclusive help no-fork nonblock shared timeout "
        "unlock verbose version"),
    "git apply": _names(
        "allow-empty allow-overlap apply build-fake-ancestor cached check directory exclude "
        "ignore-space-change ignore-whitespace inaccurate-eof include index intent-to-add "
        "no-add numstat quiet recount reject reverse stat summary unidiff-zero unsafe-paths "
        "verbose whitespace"),
    "git branch": _names(
        "abbrev all color column contains copy create-reflog delete edit-description force "
        "format ignore-case list merged move no-contains no-merged points-at quiet "
        "recurse-submodules remotes set-upstream-to show-current sort track unset-upstream "
        "verbose"),
    "git checkout": _names(
        "conflict detach force guess ignore-other-worktrees ignore-skip-worktree-bits merge "
        "orphan ours overlay overwrite-ignore patch pathspec-file-nul pathspec-from-file "
        "progress quiet recurse-submodules theirs track"),
    "git clean": _names("dry-run exclude force interactive quiet"),
    "git config": _names(
        "add blob bool bool-or-int bool-or-str default edit expiry-date file fixed-value "
        "get get-all get-color get-colorbool get-regexp get-urlmatch global includes int "
        "list local name-only null path remove-section rename-section replace-all "
        "show-origin show-scope system type unset unset-all worktree"),
    "git push": _names(
        "all atomic delete dry-run exec follow-tags force force-if-includes "
        "force-with-lease ipv4 ipv6 mirror no-verify porcelain progress prune push-option "
        "quiet receive-pack recurse-submodules repo set-upstream signed tags thin verbose"),
    "git reset": _names(
        "hard intent-to-add keep merge mixed no-refresh patch pathspec-file-nul "
        "pathspec-from-file quiet recurse-submodules soft"),
    "git restore": _names(
        "conflict ignore-skip-worktree-bits ignore-unmerged merge ours overlay patch "
        "pathspec-file-nul pathspec-from-file progress quiet recurse-submodules source "
        "staged theirs worktree"),
    "git rm": _names(
        "cached dry-run force ignore-unmatch pathspec-file-nul pathspec-from-file quiet "
        "sparse"),
    "git stash": _names(
        "all include-untracked index keep-index message only-untracked patch "
        "pathspec-file-nul pathspec-from-file quiet staged"),
    "gpasswd": _names(
        "add administrators delete help members remove-password restrict root"),
    "grep": _names(
        "after-context basic-regexp before-context binary binary-files byte-offset color "
        "colour context count dereference-recursive devices directories exclude exclude-dir "
        "exclude-from extended-regexp file files-with-matches files-without-match "
        "fixed-strings group-separator help ignore-case include initial-tab invert-match "
        "label line-buffered line-number line-regexp max-count no-filename "
        "no-group-separator no-ignore-case no-messages null null-data only-matching "
        "perl-regexp quiet recursive regexp silent text version with-filename word-regexp"),
    "groupadd": _names("force gid help key non-unique password prefix root system users"),
    "groupdel": _names("force help prefix root"),
    "groupmod": _names("append gid help new-name non-unique password prefix root users"),
    "head": _names("bytes help lines quiet silent verbose version zero-terminated"),
    "hostnamectl": _names(
        "help host json machine no-ask-password pretty static transient version"),
    "install": _names(
        "backup compare context directory group help mode no-target-directory owner "
        "preserve-context preserve-timestamps strip strip-program suffix target-directory "
        "verbose version"),
    "iptables": _names(
        "append check delete delete-chain destination exact flush fragment goto help "
        "in-interface insert ipv4 ipv6 jump line-numbers list list-rules match modprobe "
        "new-chain numeric out-interface policy protocol rename-chain replace set-counters "
        "source table verbose version wait wait-interval zero"),
    "journalctl": _names(
        "after-cursor all boot case-sensitive catalog cursor cursor-file directory "
        "disk-usage dmesg dump-catalog facility field fields file flush follow force grep "
        "header help identifier image interval lines list-boots list-catalog machine merge "
        "namespace no-full no-hostname no-pager no-tail output output-fields pager-end "
        "priority quiet relinquish-var reverse root rotate setup-keys show-cursor since "
        "smart-relinquish-var sync system unit until update-catalog user user-unit utc "
        "vacuum-files vacuum-size vacuum-time verify verify-key version"),
    "killall": _names(
        "context exact ignore-case interactive list ns older-than process-group quiet "
        "regexp signal user verbose version wait younger-than"),
    "ln": _names(
        "backup directory force help interactive logical no-dereference no-target-directory "
        "physical relative suffix symbolic target-directory verbose version"),
    "loginctl": _names(
        "all full help host kill-whom lines machine no-ask-password no-legend no-pager "
        "output property signal value version"),
    "ls": _names(
        "all almost-all author block-size classify color context dereference "
        "dereference-command-line dereference-command-line-symlink-to-dir directory dired "
        "escape file-type format full-time group-directories-first help hide "
        "hide-control-chars human-readable hyperlink ignore ignore-backups indicator-style "
        "inode kibibytes literal no-group numeric-uid-gid quote-name quoting-style "
        "recursive reverse show-control-chars si size sort tabsize time time-style version "
        "width zero"),
    "mkdir": _names("context help mode parents verbose version"),
    "mkfifo": _names("context help mode version"),
    "mknod": _names("context help mode version"),
    "modprobe": _names(
        "all config dirname dry-run dump-modversions first-time force force-modversion "
        "force-vermagic help ignore-install ignore-remove quiet remove remove-dependencies "
        "resolve-alias set-version show show-config show-depends show-modversions "
        "showconfig syslog use-blacklist verbose version"),
    "mount": _names(
        "all bind fake fork fstab help internal-only label make-private make-rprivate "
        "make-rshared make-rslave make-runbindable make-shared make-slave make-unbindable "
        "mkdir move namespace no-canonicalize no-mtab options options-mode options-source "
        "options-source-force rbind read-only read-write rw show-labels source target "
        "target-prefix test-opts types uuid verbose version"),
    "mv": _names(
        "backup context force help interactive no-clobber no-target-directory "
        "strip-trailing-slashes suffix target-directory update verbose version"),
    "nice": _names("adjustment help version"),
    "nohup": _names("help version"),
    "nsenter": _names(
        "all cgroup follow-context help ipc mount net no-fork pid preserve-credentials root "
        "setgid setuid target time user uts version wd wdns"),
    "pacman": _names(
        "arch asdeps asexplicit assume-installed cachedir cascade changelog check clean "
        "color config confirm database dbonly dbpath debug deps deptest "
        "disable-download-timeout downloadonly explicit file files foreign gpgdir groups "
        "help hookdir ignore ignoregroup info list logfile machinereadable native needed "
        "noconfirm nodeps noprogressbar nosave noscriptlet overwrite owns print "
        "print-format query quiet recursive refresh regex remove root search sync sysroot "
        "sysupgrade unneeded unrequired upgrade upgrades verbose version"),
    "passwd": _names(
        "all delete expire help inactive keep-tokens lock maxdays mindays quiet repository "
        "root status unlock warndays"),
    "pgrep": _names(
        "cgroup count delimiter euid exact full group help ignore-ancestors ignore-case "
        "inverse lightweight list-full list-name logpidfile newest ns nslist older oldest "
        "parent pgroup pidfile runstates session terminal uid version"),
    "pkill": _names(
        "cgroup count echo euid exact full group help ignore-ancestors ignore-case "
        "logpidfile newest ns nslist older oldest parent pgroup pidfile queue runstates "
        "session signal terminal uid version"),
    "readlink": _names(
        "canonicalize canonicalize-existing canonicalize-missing help no-newline quiet "
        "silent verbose version zero"),
    "realpath": _names(
        "canonicalize-existing canonicalize-missing help logical no-symlinks physical quiet "
        "relative-base relative-to strip version zero"),
    "rm": _names(
        "dir force help interactive no-preserve-root one-file-system preserve-root "
        "recursive verbose version"),
    "rmdir": _names("help ignore-fail-on-non-empty parents verbose version"),
    "runuser": _names(
        "command fast group help login preserve-environment pty session-command shell "
        "supp-group user version whitelist-environment"),
    "sed": _names(
        "debug expression file follow-symlinks help in-place line-length null-data posix "
        "quiet regexp-extended sandbox separate silent unbuffered version"),
    "setpriv": _names(
        "ambient-caps apparmor-profile bounding-set clear-groups dump egid euid groups help "
        "inh-caps init-groups keep-groups nnp no-new-privs pdeathsig regid reset-env reuid "
        "rgid ruid securebits selinux-label version"),
    "shred": _names(
        "exact force help iterations random-source remove size verbose version zero"),
    "shutdown": _names("halt help no-wall poweroff reboot show"),
    "sort": _names(
        "batch-size buffer-size check compress-program debug dictionary-order "
        "field-separator files0-from general-numeric-sort help human-numeric-sort "
        "ignore-case ignore-leading-blanks ignore-nonprinting key merge month-sort "
        "numeric-sort output parallel random-sort random-source reverse sort stable "
        "temporary-directory unique version version-sort zero-terminated"),
    "stat": _names("cached dereference file-system format help printf terse version"),
    "stdbuf": _names("error help input output version"),
    "su": _names(
        "command fast group help login preserve-environment pty session-command shell "
        "supp-group version whitelist-environment"),
    "sudo": _names(
        "askpass background bell chdir chroot close-from command-timeout edit group help "
        "host list login non-interactive other-user preserve-env preserve-groups prompt "
        "remove-timestamp reset-timestamp role set-home shell stdin type user validate "
        "version"),
    "swapoff": _names("all help verbose version"),
    "swapon": _names(
        "all bytes discard fixpgsz help ifexists noheadings options priority raw show "
        "summary verbose version"),
    "sync": _names("data file-system help version"),
    "sysctl": _names(
        "all binary deprecated dry-run help ignore load names pattern quiet system values "
        "version write"),
    "systemctl": _names(
        "all boot-loader-entry boot-loader-menu check-inhibitors dry-run failed "
        "firmware-setup force full global help host image job-mode kill-whom legend lines "
        "machine marked mkdir no-ask-password no-block no-pager no-reload no-wall now "
        "output plain preset-mode property quiet read-only recursive reverse root runtime "
        "show-transaction show-types signal state system timestamp type user value version "
        "wait what with-dependencies"),
    "systemd-run": _names(
        "collect description gid help host machine nice no-ask-password no-block on-active "
        "on-boot on-calendar on-clock-change on-startup on-timezone-change on-unit-active "
        "on-unit-inactive path-property pipe property pty quiet remain-after-exit same-dir "
        "scope send-sighup service-type setenv shell slice slice-inherit socket-property "
        "timer-property uid unit user version wait working-directory"),
    "tail": _names(
        "bytes follow help lines max-unchanged-stats pid quiet retry silent sleep-interval "
        "verbose version zero-terminated"),
    "tar": _names(
        "absolute-names acls add-file after-date anchored append atime-preserve "
        "auto-compress backup block-number blocking-factor bzip2 catenate check-device "
        "check-links checkpoint checkpoint-action clamp-mtime compare compress concatenate "
        "confirmation create delay-directory-restore delete dereference diff directory "
        "exclude exclude-backups exclude-caches exclude-caches-all exclude-caches-under "
        "exclude-from exclude-ignore exclude-ignore-recursive exclude-tag exclude-tag-all "
        "exclude-tag-under exclude-vcs exclude-vcs-ignores extract file files-from "
        "force-local format full-time get group group-map gunzip gzip hard-dereference help "
        "hole-detection ignore-case ignore-command-error ignore-failed-read ignore-zeros "
        "incremental index-file info-script interactive keep-directory-symlink "
        "keep-newer-files keep-old-files label level list listed-incremental lzip lzma lzop "
        "mode mtime multi-volume new-volume-script newer newer-mtime no-acls no-anchored "
        "no-auto-compress no-check-device no-delay-directory-restore no-ignore-case "
        "no-ignore-command-error no-null no-overwrite-dir no-quote-chars no-recursion "
        "no-same-owner no-same-permissions no-seek no-selinux no-unquote "
        "no-verbatim-files-from no-wildcards no-wildcards-match-slash no-xattrs null "
        "numeric-owner occurrence old-archive one-file-system one-top-level overwrite "
        "overwrite-dir owner owner-map pax-option portability posix preserve-order "
        "preserve-permissions quote-chars quoting-style read-full-records record-size "
        "recursion recursive-unlink remove-files restrict rmt-command rsh-command "
        "same-order same-owner same-permissions seek selinux show-defaults "
        "show-omitted-dirs show-snapshot-field-ranges show-stored-names "
        "show-transformed-names skip-old-files sort sparse sparse-version starting-file "
        "strip-components suffix tape-length test-label to-command to-stdout totals touch "
        "transform uncompress ungzip unlink-first unquote update usage use-compress-program "
        "utc verbatim-files-from verbose verify version volno-file warning wildcards "
        "wildcards-match-slash xattrs xattrs-exclude xattrs-include xform xz zstd"),
    "tee": _names("append help ignore-interrupts output-error version"),
    "timedatectl": _names(
        "adjust-system-clock all help host machine monitor no-ask-password no-pager "
        "property value version"),
    "timeout": _names("foreground help kill-after preserve-status signal verbose version"),
    "touch": _names("date help no-create no-dereference reference time version"),
    "truncate": _names("help io-blocks no-create reference size version"),
    "umount": _names(
        "all all-targets detach-loop fake force help internal-only lazy namespace "
        "no-canonicalize no-mtab quiet read-only recursive test-opts types verbose version"),
    "uniq": _names(
        "all-repeated check-chars count group help ignore-case repeated skip-chars "
        "skip-fields unique version zero-terminated"),
    "unshare": _names(
        "boottime cgroup fork help ipc keep-caps kill-child map-auto map-current-user "
        "map-group map-groups map-root-user map-user map-users monotonic mount mount-proc "
        "net pid propagation root setgid setgroups setuid time user uts version wd"),
    "useradd": _names(
        "add-subids-for-system badname base-dir btrfs-subvolume-home comment create-home "
        "defaults expiredate gid groups help home-dir inactive key no-create-home "
        "no-log-init no-user-group non-unique password prefix root selinux-user shell skel "
        "system uid user-group"),
    "userdel": _names("force help prefix remove root selinux-user"),
    "usermod": _names(
        "add-subgids add-subuids append badname comment del-subgids del-subuids expiredate "
        "gid groups help home inactive lock login move-home non-unique password prefix "
        "remove root selinux-user shell uid unlock"),
    "wget": _names(
        "accept accept-regex adjust-extension append-output ask-password auth-no-challenge "
        "background backup-converted backups base bind-address body-data body-file "
        "ca-certificate ca-directory certificate certificate-type ciphers compression "
        "config connect-timeout content-disposition content-on-error continue "
        "convert-file-only convert-links crl-file cut-dirs debug default-page delete-after "
        "directory-prefix dns-timeout domains exclude-directories exclude-domains execute "
        "follow-ftp follow-tags force-directories force-html ftp-password ftp-user "
        "ftps-clear-data-connection ftps-fallback-to-ftp ftps-implicit ftps-resume-ssl "
        "header help hsts-file http-password http-user https-only ignore-case ignore-length "
        "ignore-tags include-directories inet4-only inet6-only input-file "
        "keep-session-cookies level limit-rate load-cookies local-encoding max-redirect "
        "method mirror no-cache no-check-certificate no-clobber no-config no-cookies "
        "no-directories no-dns-cache no-glob no-host-directories no-hsts no-http-keep-alive "
        "no-if-modified-since no-iri no-netrc no-parent no-passive-ftp no-proxy "
        "no-remove-listing no-use-server-timestamps no-verbose no-warc-compression "
        "no-warc-digests no-warc-keep-log output-document output-file page-requisites "
        "password pinnedpubkey post-data post-file prefer-family preserve-permissions "
        "private-key private-key-type progress protocol-directories proxy-password "
        "proxy-user quiet quota random-wait read-timeout recursive referer regex-type "
        "reject reject-regex rejected-log relative remote-encoding report-speed "
        "restrict-file-names retr-symlinks retry-connrefused retry-on-http-error "
        "save-cookies save-headers secure-protocol server-response show-progress span-hosts "
        "spider start-pos strict-comments timeout timestamping tries trust-server-names "
        "unlink use-askpass user user-agent verbose version wait waitretry warc-cdx "
        "warc-dedup warc-file warc-header warc-max-size warc-tempdir xattr"),
    "wipefs": _names(
        "all backup force help json lock no-act noheadings offset output parsable quiet "
        "types version"),
    "xargs": _names(
        "arg-file delimiter eof exit help interactive max-args max-chars max-lines "
        "max-procs no-run-if-empty null open-tty process-slot-var replace show-limits "
        "verbose version"),
    "blkdiscard": _names("force help length offset secure step verbose version zeroout"),
    "losetup": _names(
        "all associated detach detach-all direct-io find help json list noheadings nooverlap "
        "offset output output-all partscan raw read-only sector-size set-capacity show "
        "sizelimit verbose version"),
    "mkswap": _names("check force help label lock pagesize quiet swapversion uuid verbose version"),
    "fdisk": _names(
        "bytes color compatibility help list list-details lock noauto-pt output protect-boot "
        "sector-size type units version wipe wipe-partitions"),
    "sfdisk": _names(
        "activate append backup backup-file bytes color delete disk-id dump force help json "
        "label label-nested list list-free list-types lock move-data move-use-fsync no-act "
        "no-reread no-tell-kernel output part-attrs part-label part-type part-uuid quiet "
        "relocate reorder sector-size show-geometry show-size verify version wipe "
        "wipe-partitions"),
    **STORAGE_OPTIONS,
}
"""Long option names (without ``--``) per program; ``git SUB`` for a git subcommand."""

"""Long options of the disk, boot and firewall tools whose rules matter most to safety.

Part of :data:`anna_common.shell.longopt_table.LONG_OPTIONS`. Each list is the program's own:
its ``--help`` (efibootmgr 17, bootctl of systemd 252, parted 3.5, setfacl 2.3.1,
mkfs.btrfs 6.2, mkfs.fat 4.2, mkfs of util-linux 2.38), the option table in its binary
(mdadm 4.2, efibootmgr, bootctl), its manual page (LVM 2.03.16 per command, nft 1.0.6) or
its ``argparse`` calls (firewall-cmd 1.3.3), taken from the Debian 12 packages. Each program
was run with a prefix of ``--version`` (or ``--help``) to see that it takes abbreviations:
efibootmgr, bootctl, parted, mdadm, setfacl, mkfs.btrfs, mkfs.fat and LVM
(``vgs --versio``) do; firewall-cmd is ``argparse``, whose ``allow_abbrev`` is on.
cryptsetup (popt) refused ``--versio``: it takes no abbreviations, so it has no entry (its
options are read as written). mkfs.ext4/mke2fs and mkfs.xfs have no long options at all.

A name missing here can only make a prefix look unique when the program finds it ambiguous
and refuses to run; a name here that the program lacks could hide a real expansion, so only
names the program itself lists are here.
"""

from __future__ import annotations


def _names(text: str) -> frozenset[str]:
    return frozenset(text.split())


_LVM_COMMON = (
    "commandprofile config debug devices devicesfile driverloaded help journal lockopt "
    "longhelp metadataprofile nohints nolocking profile quiet reportformat test units "
    "verbose version yes ")

STORAGE_OPTIONS: dict[str, frozenset[str]] = {
    "efibootmgr": _names(
        "active append-binary-args bootnext bootnum bootorder create create-only "
        "delete-bootnext delete-bootnum delete-bootorder delete-timeout device disk driver edd "
        "edd-device edd30 gpt help iface inactive keep label loader mirror-above-4 "
        "mirror-below-4 part quiet remove-dups sysprep timeout unicode verbose version "
        "write-signature"),
    "bootctl": _names(
        "all-architectures boot-path efi-boot-option-description entry-token esp-path "
        "graceful help image install-source json make-entry-directory "
        "make-machine-id-directory no-pager no-variables path print-boot-path print-esp-path "
        "print-path quiet root version"),
    "parted": _names("align fix help json list machine script version"),
    "setfacl": _names(
        "default help logical mask modify modify-file no-mask physical recursive remove "
        "remove-all remove-default remove-file restore set set-file test version"),
    "mkfs": _names("help type verbose version"),
    "mkfs.btrfs": _names(
        "byte-count checksum csum data features force help label leafsize metadata mixed "
        "nodesize nodiscard quiet rootdir runtime-features sectorsize shrink uuid verbose "
        "version"),
    **dict.fromkeys(("mkfs.fat", "mkfs.vfat", "mkfs.msdos", "mkdosfs"), _names(
        "codepage help invariant mbr offset variant")),
    "mdadm": _names(
        "action add add-journal add-spare alert array-size assemble assume-clean auto "
        "auto-detect backup-file bitmap bitmap-chunk brief build chunk cluster-confirm config "
        "consistency-policy continue create daemonise data-offset delay detail "
        "detail-platform dump examine examine-badblocks examine-bitmap export fail failfast "
        "follow force freeze-reshape grow help help-options home-cluster homehost increment "
        "incremental invalid-backup kill kill-subarray layout level mail manage metadata misc "
        "monitor name no-degraded nodes nofailfast offroot oneshot parity pid-file prefer "
        "program query quiet raid-devices re-add readonly readwrite rebuild-map remove "
        "replace restore revert-reshape rounding run scan set-faulty size spare-devices stop "
        "super-minor symlinks syslog test update update-subarray uuid verbose version wait "
        "wait-clean with write-behind write-journal write-mostly zero-superblock"),
    "lvremove": _names(_LVM_COMMON + "autobackup force noudevsync options select nohistory"),
    "vgremove": _names(_LVM_COMMON + "force noudevsync options removemissing select"),
    "pvremove": _names(_LVM_COMMON + "force"),
    "lvreduce": _names(_LVM_COMMON + "autobackup extents force nofsck noudevsync resizefs "
                                     "size"),
    "nft": _names(
        "check debug define echo file guid handle help includepath interactive json numeric "
        "optimize reversedns service stateless terse version"),
    "firewall-cmd": _names(
        "add-chain add-destination add-egress-zone add-entries-from-file add-entry "
        "add-forward add-forward-port add-helper add-icmp-block add-icmp-block-inversion "
        "add-include add-ingress-zone add-interface add-lockdown-whitelist-command "
        "add-lockdown-whitelist-context add-lockdown-whitelist-uid add-lockdown-whitelist-user "
        "add-masquerade add-module add-option add-passthrough add-port add-protocol "
        "add-rich-rule add-rule add-service add-source add-source-port change-interface "
        "change-source check-config complete-reload delete-helper delete-icmptype "
        "delete-ipset delete-policy delete-service delete-zone direct family "
        "get-active-policies get-active-zones get-all-chains get-all-passthroughs "
        "get-all-rules get-automatic-helpers get-chains get-default-zone get-description "
        "get-destination get-destinations get-entries get-family get-helpers get-icmptypes "
        "get-includes get-ipset-types get-ipsets get-log-denied get-module get-modules "
        "get-options get-passthroughs get-policies get-ports get-priority get-protocols "
        "get-rules get-service-helpers get-services get-short get-source-ports get-target "
        "get-zone-of-interface get-zone-of-source get-zones help helper icmptype info-helper "
        "info-icmptype info-ipset info-policy info-service info-zone ipset list-all "
        "list-all-policies list-all-zones list-egress-zones list-forward-ports "
        "list-icmp-blocks list-ingress-zones list-interfaces list-lockdown-whitelist-commands "
        "list-lockdown-whitelist-contexts list-lockdown-whitelist-uids "
        "list-lockdown-whitelist-users list-ports list-protocols list-rich-rules "
        "list-services list-source-ports list-sources load-helper-defaults "
        "load-icmptype-defaults load-ipset-defaults load-policy-defaults "
        "load-service-defaults load-zone-defaults lockdown-off lockdown-on module name "
        "new-helper new-helper-from-file new-icmptype new-icmptype-from-file new-ipset "
        "new-ipset-from-file new-policy new-policy-from-file new-service "
        "new-service-from-file new-zone new-zone-from-file option panic-off panic-on "
        "passthrough path-helper path-icmptype path-ipset path-policy path-service path-zone "
        "permanent policy query-chain query-destination query-egress-zone query-entry "
        "query-forward query-forward-port query-helper query-icmp-block "
        "query-icmp-block-inversion query-include query-ingress-zone query-interface "
        "query-lockdown query-lockdown-whitelist-command query-lockdown-whitelist-context "
        "query-lockdown-whitelist-uid query-lockdown-whitelist-user query-masquerade "
        "query-module query-option query-panic query-passthrough query-port query-protocol "
        "query-rich-rule query-rule query-service query-source query-source-port quiet "
        "reload remove-chain remove-destination remove-egress-zone remove-entries-from-file "
        "remove-entry remove-forward remove-forward-port remove-helper remove-icmp-block "
        "remove-icmp-block-inversion remove-include remove-ingress-zone remove-interface "
        "remove-lockdown-whitelist-command remove-lockdown-whitelist-context "
        "remove-lockdown-whitelist-uid remove-lockdown-whitelist-user remove-masquerade "
        "remove-module remove-option remove-passthrough remove-port remove-protocol "
        "remove-rich-rule remove-rule remove-rules remove-service remove-source "
        "remove-source-port reset-to-defaults runtime-to-permanent service "
        "set-automatic-helpers set-default-zone set-description set-destination set-family "
        "set-log-denied set-module set-priority set-short set-target state timeout type "
        "verbose version zone"),
}
"""Program → its long options (without the leading ``--``)."""

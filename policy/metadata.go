package policy

import (
	"net/netip"
	"strings"
)

// Cloud metadata endpoints hand out the machine's cloud credentials to
// whoever asks them from the machine: a shell reaches one only where the
// configuration's network.allowCloudMetadata names them as such, never by
// a plain --allow-host or a grant, and a refusal suggests nothing.
var (
	metadataAddrs = []netip.Addr{
		netip.MustParseAddr("169.254.169.254"), // AWS, Azure, GCP, OCI, DigitalOcean, OpenStack…
		netip.MustParseAddr("fd00:ec2::254"),   // AWS over IPv6
		netip.MustParseAddr("169.254.170.2"),   // AWS ECS task credentials
		netip.MustParseAddr("169.254.170.23"),  // AWS EKS pod identity
		netip.MustParseAddr("fd00:ec2::23"),
		netip.MustParseAddr("100.100.100.200"), // Alibaba Cloud
		netip.MustParseAddr("192.0.0.192"),     // Oracle Cloud (classic)
	}
	metadataNames = []string{
		"metadata.google.internal", "metadata.goog", "metadata", "instance-data",
		"instance-data.ec2.internal", "metadata.azure.internal", "metadata.tencentyun.com",
		"metadata.platformequinix.com",
	}
)

// MetadataRule is why a cloud metadata endpoint was refused.
const MetadataRule = "a cloud metadata endpoint, which hands out this machine's cloud credentials; shells reach one only where the configuration's network.allowCloudMetadata is true"

// IsMetadata reports whether host (a name or an address, normalized) is a
// cloud metadata endpoint.
func IsMetadata(host string) bool {
	if a, err := netip.ParseAddr(host); err == nil {
		return IsMetadataAddr(a)
	}
	h := strings.TrimSuffix(strings.ToLower(host), ".")
	for _, n := range metadataNames {
		if h == n {
			return true
		}
	}
	return false
}

// IsMetadataAddr reports whether a is a cloud metadata endpoint's address.
func IsMetadataAddr(a netip.Addr) bool {
	a = a.Unmap()
	for _, m := range metadataAddrs {
		if a == m {
			return true
		}
	}
	return false
}

package dlabi

// NegotiateVersion is a producer's answer to a consumer's max_version,
// for a producer that implements version producer (1.x): a versioned
// tensor for a major of 1 or more, carrying 1.min(minor, producer.Minor)
// for major 1 and producer itself for a newer major; a legacy tensor for
// nil or major 0. dlpack.Export decides with it, and pyext's C half reads
// its answers from a table Go fills with it, so the rule has one
// implementation.
func NegotiateVersion(maxVersion *Version, producer Version) (v Version, versioned bool) {
	if maxVersion == nil || maxVersion.Major < 1 {
		return Version{}, false
	}
	v = producer
	if maxVersion.Major == 1 && maxVersion.Minor < v.Minor {
		v.Minor = maxVersion.Minor
	}
	return v, true
}

package io.github.ratelimit.web;

import java.time.Duration;
import java.util.List;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

import org.springframework.boot.test.system.CapturedOutput;
import org.springframework.boot.test.system.OutputCaptureExtension;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatIllegalArgumentException;

@ExtendWith(OutputCaptureExtension.class)
class TrustedProxiesClientIpResolverTests {

	private final TrustedProxiesClientIpResolver untrusting = resolver(List.of());

	private final TrustedProxiesClientIpResolver behindProxies = resolver(List.of("10.0.0.0/16", "2001:db8:ffff::/48"));

	@Test
	void withoutTrustedProxiesForwardedHeadersAreIgnored() {
		MockRateLimitRequest request = request("198.51.100.7");
		request.addHeader("X-Forwarded-For", "203.0.113.1");
		request.addHeader("Forwarded", "for=203.0.113.2");
		assertThat(this.untrusting.resolve(request)).isEqualTo("198.51.100.7");
	}

	@Test
	void anUntrustedPeersForwardedHeadersAreIgnored() {
		MockRateLimitRequest request = request("198.51.100.7");
		request.addHeader("X-Forwarded-For", "203.0.113.1");
		assertThat(this.behindProxies.resolve(request)).isEqualTo("198.51.100.7");
	}

	@Test
	void behindATrustedProxyTheRightmostUntrustedAddressIsTheClient() {
		MockRateLimitRequest request = request("10.0.0.5");
		request.addHeader("X-Forwarded-For", "6.6.6.6, 203.0.113.9, 10.0.2.3");
		assertThat(this.behindProxies.resolve(request)).isEqualTo("203.0.113.9");
	}

	@Test
	void severalForwardedForHeadersAreOneChain() {
		MockRateLimitRequest request = request("10.0.0.5");
		request.addHeader("X-Forwarded-For", "6.6.6.6");
		request.addHeader("X-Forwarded-For", "203.0.113.9");
		assertThat(this.behindProxies.resolve(request)).isEqualTo("203.0.113.9");
	}

	@Test
	void onlyTheHeaderTheProxiesWriteIsReadAndAnotherIsTheClientsOwnEvenWhenTheirsIsMissing() {
		for (ForwardedHeader header : ForwardedHeader.values()) {
			TrustedProxiesClientIpResolver resolver = resolver(List.of("10.0.0.0/16"), header);
			MockRateLimitRequest request = request("10.0.0.5");
			// The proxy writes its header; the client wrote the two others, which the proxy passed on.
			request.addHeader("X-Forwarded-For", (header == ForwardedHeader.X_FORWARDED_FOR) ? "203.0.113.7" : "6.6.6.6");
			request.addHeader("Forwarded", (header == ForwardedHeader.FORWARDED) ? "for=203.0.113.7" : "for=6.6.6.7");
			request.addHeader("X-Real-IP", (header == ForwardedHeader.X_REAL_IP) ? "203.0.113.7" : "6.6.6.8");
			assertThat(resolver.resolve(request)).as(header.name()).isEqualTo("203.0.113.7");
			MockRateLimitRequest withoutTheirs = request("10.0.0.5");
			for (ForwardedHeader other : ForwardedHeader.values()) {
				if (other != header) {
					withoutTheirs.addHeader(other.headerName(),
							(other == ForwardedHeader.FORWARDED) ? "for=6.6.6.6" : "6.6.6.6");
				}
			}
			assertThat(resolver.resolve(withoutTheirs)).as(header.name()).isEqualTo("10.0.0.5");
		}
	}

	@Test
	void theForwardedHeadersQuotedIpv6AndPortsAreRead() {
		TrustedProxiesClientIpResolver resolver = resolver(List.of("10.0.0.0/16"), ForwardedHeader.FORWARDED);
		MockRateLimitRequest request = request("10.0.0.5");
		request.addHeader("Forwarded", "for=6.6.6.6, for=\"[2001:DB8:cafe::17]:4711\";proto=https, for=10.0.9.9");
		assertThat(resolver.resolve(request)).isEqualTo("2001:db8:cafe:0:0:0:0:0/64");
		MockRateLimitRequest withPort = request("10.0.0.5");
		withPort.addHeader("Forwarded", "for=\"192.0.2.43:47011\"");
		assertThat(resolver.resolve(withPort)).isEqualTo("192.0.2.43");
	}

	@Test
	void xRealIpIsTheOneAddressTheProxySet() {
		TrustedProxiesClientIpResolver resolver = resolver(List.of("10.0.0.5"), ForwardedHeader.X_REAL_IP);
		MockRateLimitRequest request = request("10.0.0.5");
		request.addHeader("X-Real-IP", "6.6.6.6, 203.0.113.7");
		assertThat(resolver.resolve(request)).isEqualTo("203.0.113.7");
	}

	@Test
	void forwardedValuesAreReadAsLiteralsAndNeverResolved() {
		for (String value : new String[] { ".::1", "::1.", "1.2.3.4.", "localhost", "example.com", "a::b::c",
				"::ffff:1.2.3", "1.2.3.4::", "12345::", "::g", "1:2:3:4:5:6:7:8:9", "1:2:3:4:5:6:7", ":1", "1:",
				"\u0661::1", "[::1]x" }) {
			assertThat(IpAddresses.parse(value)).as(value).isNull();
		}
		assertThat(IpAddresses.parse("::").getHostAddress()).isEqualTo("0:0:0:0:0:0:0:0");
		assertThat(IpAddresses.parse("1::").getHostAddress()).isEqualTo("1:0:0:0:0:0:0:0");
		assertThat(IpAddresses.parse("1:2:3:4:5:6:7::").getHostAddress()).isEqualTo("1:2:3:4:5:6:7:0");
		assertThat(IpAddresses.parse("[2001:db8::1]").getHostAddress()).isEqualTo("2001:db8:0:0:0:0:0:1");
		assertThat(IpAddresses.parse("64:ff9b::192.0.2.1").getHostAddress()).isEqualTo("64:ff9b:0:0:0:0:c000:201");
		assertThat(IpAddresses.parse("::FFFF:192.0.2.1").getHostAddress()).isEqualTo("192.0.2.1");
	}

	@Test
	void transitionAddressesAreKeyedByTheIpv4AddressTheyCarry() {
		// 6to4 gives each IPv4 address a /48: keyed by its /64s, one client would have 65,536 quotas.
		assertThat(this.untrusting.resolve(request("2002:cb00:7107:1::1"))).isEqualTo("203.0.113.7");
		assertThat(this.untrusting.resolve(request("2002:cb00:7107:ffff::2"))).isEqualTo("203.0.113.7");
		// Teredo and NAT64 put many IPv4 clients in one /64: each is its own client.
		assertThat(this.untrusting.resolve(request("2001:0:4136:e378:8000:63bf:34ff:8ef8"))).isEqualTo("203.0.113.7");
		assertThat(this.untrusting.resolve(request("64:ff9b::cb00:7107"))).isEqualTo("203.0.113.7");
		assertThat(this.untrusting.resolve(request("64:ff9b::cb00:7108"))).isEqualTo("203.0.113.8");
		assertThat(this.untrusting.resolve(request("::203.0.113.7"))).isEqualTo("203.0.113.7");
		assertThat(this.untrusting.resolve(request("::1"))).isEqualTo("0:0:0:0:0:0:0:0/64");
	}

	@Test
	void aValueThatIsNotAnAddressNeverBecomesAKey() {
		for (String value : new String[] { "unknown", "_hidden", "localhost", "example.com", "999.1.1.1", "1.2.3",
				"fe80::1%eth0", "[::1", "1.2.3.4:http", "" }) {
			MockRateLimitRequest request = request("10.0.0.5");
			request.addHeader("X-Forwarded-For", value);
			assertThat(this.behindProxies.resolve(request)).as(value).isEqualTo("10.0.0.5");
		}
	}

	@Test
	void whenEveryHopIsTrustedTheFarthestIsTheClient() {
		MockRateLimitRequest request = request("10.0.0.5");
		request.addHeader("X-Forwarded-For", "10.0.3.3, 10.0.2.2");
		assertThat(this.behindProxies.resolve(request)).isEqualTo("10.0.3.3");
	}

	@Test
	void withoutForwardedHeadersATrustedPeerIsTheClient() {
		assertThat(this.behindProxies.resolve(request("10.0.0.5"))).isEqualTo("10.0.0.5");
	}

	@Test
	void ipv4AddressesWrittenOtherwiseBecomeTheCanonicalKeyOfTheSameClient() {
		assertThat(this.untrusting.resolve(request("198.51.100.7"))).isEqualTo("198.51.100.7");
		assertThat(this.untrusting.resolve(request("198.051.100.007"))).isEqualTo("198.51.100.7");
		assertThat(this.untrusting.resolve(request(" 198.51.100.7 "))).isEqualTo("198.51.100.7");
		assertThat(this.untrusting.resolve(request("0.0.0.0"))).isEqualTo("0.0.0.0");
		assertThat(this.untrusting.resolve(request("255.255.255.255"))).isEqualTo("255.255.255.255");
		assertThat(IpAddresses.isCanonicalIpv4("198.51.100.7")).isTrue();
		assertThat(IpAddresses.isCanonicalIpv4("10.0.0.1")).isTrue();
		for (String other : new String[] { "198.051.100.7", "01.2.3.4", "1.2.3", "1.2.3.4.5", "256.1.1.1", "1.2.3.",
				".1.2.3", "1..2.3", " 1.2.3.4", "1.2.3.4 ", "1.2.3.4/32", "a.b.c.d", "1234.1.1.1", "" }) {
			assertThat(IpAddresses.isCanonicalIpv4(other)).as(other).isFalse();
		}
		assertThat(IpAddresses.isCanonicalIpv4(null)).isFalse();
	}

	@Test
	void ipv4MappedAddressesAreTheirIpv4Address() {
		assertThat(this.untrusting.resolve(request("::ffff:203.0.113.9"))).isEqualTo("203.0.113.9");
		MockRateLimitRequest forwarded = request("10.0.0.5");
		forwarded.addHeader("X-Forwarded-For", "::ffff:203.0.113.9");
		assertThat(this.behindProxies.resolve(forwarded)).isEqualTo("203.0.113.9");
	}

	@Test
	void ipv6AddressesOfOneNetworkShareAKeyWrittenCanonically() {
		String a = this.untrusting.resolve(request("2001:DB8:0:0::1"));
		String b = this.untrusting.resolve(request("2001:db8::ffff:1234"));
		String c = this.untrusting.resolve(request("2001:db8:0:1::1"));
		assertThat(a).isEqualTo(b).isEqualTo("2001:db8:0:0:0:0:0:0/64");
		assertThat(c).isNotEqualTo(a);
	}

	@Test
	void prefixLengthsAreConfigurable() {
		TrustedProxiesClientIpResolver coarse = new TrustedProxiesClientIpResolver(List.of(), 24, 48,
				Duration.ofMinutes(1));
		assertThat(coarse.resolve(request("203.0.113.77"))).isEqualTo("203.0.113.0/24");
		assertThat(coarse.resolve(request("2001:db8:1:2::1"))).isEqualTo("2001:db8:1:0:0:0:0:0/48");
		TrustedProxiesClientIpResolver exact = new TrustedProxiesClientIpResolver(List.of(), 32, 128,
				Duration.ofMinutes(1));
		assertThat(exact.resolve(request("2001:db8::1"))).isEqualTo("2001:db8:0:0:0:0:0:1");
	}

	@Test
	void trustingEveryAddressIsRefusedAndABroadRangeIsLoggedAtWarn(CapturedOutput output) {
		assertThatIllegalArgumentException().isThrownBy(() -> resolver(List.of("0.0.0.0/0")))
			.withMessageContaining("'0.0.0.0/0' trusts every address");
		assertThatIllegalArgumentException().isThrownBy(() -> resolver(List.of("::/0")))
			.withMessageContaining("'::/0' trusts every address");
		resolver(List.of("10.1.0.0/16", "2001:db8::/32"));
		assertThat(output).doesNotContain("is broad");
		resolver(List.of("10.0.0.0/8"));
		assertThat(output).contains("Trusted proxy range 10.0.0.0/8 is broad");
		resolver(List.of("2001:db8::/31"));
		assertThat(output).contains("Trusted proxy range 2001:db8::/31 is broad");
	}

	@Test
	void badTrustedProxiesAndPrefixLengthsAreRejectedNamingTheValue() {
		assertThatIllegalArgumentException().isThrownBy(() -> resolver(List.of("proxy.internal")))
			.withMessageContaining("'proxy.internal' is not an IP address or a CIDR block");
		assertThatIllegalArgumentException().isThrownBy(() -> resolver(List.of("10.0.0.0/33")))
			.withMessageContaining("'10.0.0.0/33' has a prefix length that is not a number from 0 to 32");
		assertThatIllegalArgumentException()
			.isThrownBy(() -> new TrustedProxiesClientIpResolver(List.of(), 0, 64, Duration.ZERO))
			.withMessage("'ipv4PrefixLength' must be from 1 to 32 but was 0");
	}

	private static TrustedProxiesClientIpResolver resolver(List<String> trustedProxies) {
		return new TrustedProxiesClientIpResolver(trustedProxies, 32, 64, Duration.ofMinutes(1));
	}

	private static TrustedProxiesClientIpResolver resolver(List<String> trustedProxies, ForwardedHeader header) {
		return new TrustedProxiesClientIpResolver(trustedProxies, header, 32, 64, Duration.ofMinutes(1));
	}

	private static MockRateLimitRequest request(String remoteAddress) {
		return new MockRateLimitRequest().setRemoteAddr(remoteAddress);
	}

}

package io.github.ratelimit.web;

import java.time.Duration;
import java.util.List;

import org.junit.jupiter.api.Test;

import org.springframework.mock.web.MockHttpServletRequest;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatIllegalArgumentException;

class TrustedProxiesClientIpResolverTests {

	private final TrustedProxiesClientIpResolver untrusting = resolver(List.of());

	private final TrustedProxiesClientIpResolver behindProxies = resolver(List.of("10.0.0.0/8", "2001:db8:ffff::/48"));

	@Test
	void withoutTrustedProxiesForwardedHeadersAreIgnored() {
		MockHttpServletRequest request = request("198.51.100.7");
		request.addHeader("X-Forwarded-For", "203.0.113.1");
		request.addHeader("Forwarded", "for=203.0.113.2");
		assertThat(this.untrusting.resolve(request)).isEqualTo("198.51.100.7");
	}

	@Test
	void anUntrustedPeersForwardedHeadersAreIgnored() {
		MockHttpServletRequest request = request("198.51.100.7");
		request.addHeader("X-Forwarded-For", "203.0.113.1");
		assertThat(this.behindProxies.resolve(request)).isEqualTo("198.51.100.7");
	}

	@Test
	void behindATrustedProxyTheRightmostUntrustedAddressIsTheClient() {
		MockHttpServletRequest request = request("10.0.0.5");
		request.addHeader("X-Forwarded-For", "6.6.6.6, 203.0.113.9, 10.1.2.3");
		assertThat(this.behindProxies.resolve(request)).isEqualTo("203.0.113.9");
	}

	@Test
	void severalForwardedForHeadersAreOneChain() {
		MockHttpServletRequest request = request("10.0.0.5");
		request.addHeader("X-Forwarded-For", "6.6.6.6");
		request.addHeader("X-Forwarded-For", "203.0.113.9");
		assertThat(this.behindProxies.resolve(request)).isEqualTo("203.0.113.9");
	}

	@Test
	void theForwardedHeaderWinsAndItsQuotedIpv6AndPortsAreRead() {
		MockHttpServletRequest request = request("10.0.0.5");
		request.addHeader("X-Forwarded-For", "203.0.113.50");
		request.addHeader("Forwarded", "for=6.6.6.6, for=\"[2001:DB8:cafe::17]:4711\";proto=https, for=10.9.9.9");
		assertThat(this.behindProxies.resolve(request)).isEqualTo("2001:db8:cafe:0:0:0:0:0/64");
		MockHttpServletRequest withPort = request("10.0.0.5");
		withPort.addHeader("Forwarded", "for=\"192.0.2.43:47011\"");
		assertThat(this.behindProxies.resolve(withPort)).isEqualTo("192.0.2.43");
	}

	@Test
	void aValueThatIsNotAnAddressNeverBecomesAKey() {
		for (String value : new String[] { "unknown", "_hidden", "localhost", "example.com", "999.1.1.1", "1.2.3",
				"fe80::1%eth0", "[::1", "1.2.3.4:http", "" }) {
			MockHttpServletRequest request = request("10.0.0.5");
			request.addHeader("X-Forwarded-For", value);
			assertThat(this.behindProxies.resolve(request)).as(value).isEqualTo("10.0.0.5");
		}
	}

	@Test
	void whenEveryHopIsTrustedTheFarthestIsTheClient() {
		MockHttpServletRequest request = request("10.0.0.5");
		request.addHeader("X-Forwarded-For", "10.3.3.3, 10.2.2.2");
		assertThat(this.behindProxies.resolve(request)).isEqualTo("10.3.3.3");
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
		MockHttpServletRequest forwarded = request("10.0.0.5");
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

	private static MockHttpServletRequest request(String remoteAddress) {
		MockHttpServletRequest request = new MockHttpServletRequest();
		request.setRemoteAddr(remoteAddress);
		return request;
	}

}

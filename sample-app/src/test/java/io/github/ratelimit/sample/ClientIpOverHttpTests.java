package io.github.ratelimit.sample;

import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.UUID;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import org.springframework.boot.SpringApplication;
import org.springframework.context.ConfigurableApplicationContext;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Who the client is, over real HTTP, on the sample's {@code /api/v1/resources} (5 per minute per client IP): a
 * client cannot buy quota by writing forwarded headers, behind a trusted proxy the address the proxy saw, in the one
 * header it writes, is the key (whatever the client wrote in that header before it, or in any other), one per IPv6
 * /64, the same for an IPv4 address and its IPv4-mapped form.
 */
class ClientIpOverHttpTests {

	private final HttpClient client = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();

	private ConfigurableApplicationContext app;

	@AfterEach
	void stop() {
		if (this.app != null) {
			this.app.close();
		}
	}

	@Test
	void aForgedForwardedForFromAnUntrustedPeerBuysNoQuota() throws Exception {
		start();
		for (int i = 0; i < 5; i++) {
			assertThat(get("X-Forwarded-For", randomIpv4())).isEqualTo(200);
		}
		assertThat(get("X-Forwarded-For", randomIpv4())).isEqualTo(429);
		assertThat(get("Forwarded", "for=" + randomIpv4())).isEqualTo(429);
	}

	@Test
	void behindATrustedProxyTheAddressItSawIsTheKeyWhateverTheClientWroteBeforeIt() throws Exception {
		start("--ratelimit.client-ip.trusted-proxies=127.0.0.1,::1");
		for (int i = 0; i < 5; i++) {
			assertThat(get("X-Forwarded-For", randomIpv4() + ", 203.0.113.5")).isEqualTo(200);
		}
		assertThat(get("X-Forwarded-For", randomIpv4() + ", 203.0.113.5")).isEqualTo(429);
		assertThat(get("X-Forwarded-For", "203.0.113.5, 203.0.113.6")).as("another client").isEqualTo(200);
	}

	@Test
	void behindAProxyThatAppendsToXForwardedForAForwardedHeaderTheClientWroteIsNeverRead() throws Exception {
		start("--ratelimit.client-ip.trusted-proxies=127.0.0.1,::1", "--ratelimit.client-ip.exempt=10.1.2.0/24");
		// nginx, an ALB or Cloudflare append the address they saw to X-Forwarded-For, and pass Forwarded on as is.
		for (int i = 0; i < 5; i++) {
			assertThat(get("X-Forwarded-For", "203.0.113.7", "Forwarded", "for=" + randomIpv4())).isEqualTo(200);
		}
		assertThat(get("X-Forwarded-For", "203.0.113.7", "Forwarded", "for=" + randomIpv4())).isEqualTo(429);
		assertThat(get("X-Forwarded-For", "203.0.113.7", "Forwarded", "for=10.1.2.3")).as("an exempt address named")
			.isEqualTo(429);
		assertThat(get("X-Forwarded-For", "203.0.113.7", "X-Real-IP", "10.1.2.3")).isEqualTo(429);
	}

	@Test
	void behindAProxyThatWritesForwardedAnXForwardedForTheClientWroteIsNeverRead() throws Exception {
		start("--ratelimit.client-ip.trusted-proxies=127.0.0.1,::1", "--ratelimit.client-ip.forwarded-header=forwarded",
				"--ratelimit.client-ip.exempt=10.1.2.0/24");
		for (int i = 0; i < 5; i++) {
			assertThat(get("Forwarded", "for=203.0.113.7", "X-Forwarded-For", randomIpv4())).isEqualTo(200);
		}
		assertThat(get("Forwarded", "for=203.0.113.7", "X-Forwarded-For", randomIpv4())).isEqualTo(429);
		assertThat(get("Forwarded", "for=203.0.113.7", "X-Forwarded-For", "10.1.2.3")).isEqualTo(429);
		assertThat(get("X-Forwarded-For", "198.51.100.1")).as("without the proxy's header, its own address")
			.isEqualTo(200);
	}

	@Test
	void behindAProxyThatSetsXRealIpNeitherForwardedHeaderTheClientWroteIsRead() throws Exception {
		start("--ratelimit.client-ip.trusted-proxies=127.0.0.1,::1", "--ratelimit.client-ip.forwarded-header=x-real-ip");
		for (int i = 0; i < 5; i++) {
			assertThat(get("X-Real-IP", "203.0.113.7", "X-Forwarded-For", randomIpv4(), "Forwarded",
					"for=" + randomIpv4())).isEqualTo(200);
		}
		assertThat(get("X-Real-IP", "203.0.113.7", "X-Forwarded-For", randomIpv4())).isEqualTo(429);
		assertThat(get("X-Real-IP", "203.0.113.8")).as("another client").isEqualTo(200);
	}

	@Test
	void addressesInOneIpv6NetworkShareACounter() throws Exception {
		start("--ratelimit.client-ip.trusted-proxies=127.0.0.1,::1", "--ratelimit.client-ip.forwarded-header=forwarded");
		for (int i = 1; i <= 5; i++) {
			assertThat(get("Forwarded", "for=\"[2001:db8:1:2::" + Integer.toHexString(i * 4099) + "]:443\""))
				.isEqualTo(200);
		}
		assertThat(get("Forwarded", "for=\"[2001:db8:1:2:ffff:ffff:ffff:ffff]\"")).isEqualTo(429);
		assertThat(get("Forwarded", "for=\"[2001:db8:1:3::1]\"")).as("the next /64").isEqualTo(200);
	}

	@Test
	void anIpv4MappedAddressIsItsIpv4Address() throws Exception {
		start("--ratelimit.client-ip.trusted-proxies=127.0.0.1,::1");
		for (int i = 0; i < 3; i++) {
			assertThat(get("X-Forwarded-For", "203.0.113.7")).isEqualTo(200);
		}
		assertThat(get("X-Forwarded-For", "::ffff:203.0.113.7")).isEqualTo(200);
		assertThat(get("X-Forwarded-For", "::FFFF:cb00:7107")).isEqualTo(200);
		assertThat(get("X-Forwarded-For", "203.0.113.7")).isEqualTo(429);
	}

	private void start(String... arguments) {
		String[] all = new String[arguments.length + 2];
		all[0] = "--server.port=0";
		all[1] = "--ratelimit.policies.resources.algorithm=sliding-log"; // no window edge inside a test
		System.arraycopy(arguments, 0, all, 2, arguments.length);
		this.app = SpringApplication.run(SampleApplication.class, all);
	}

	/** GET the resources with the given headers, names and values in turn. */
	private int get(String... headers) throws Exception {
		int port = Integer.parseInt(this.app.getEnvironment().getProperty("local.server.port"));
		HttpRequest request = HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + "/api/v1/resources"))
			.headers(headers)
			.timeout(Duration.ofSeconds(10))
			.build();
		return this.client.send(request, HttpResponse.BodyHandlers.discarding()).statusCode();
	}

	private static String randomIpv4() {
		UUID random = UUID.randomUUID();
		long bits = random.getLeastSignificantBits();
		return (1 + (bits & 0x7F)) + "." + ((bits >> 8) & 0xFF) + "." + ((bits >> 16) & 0xFF) + "." + ((bits >> 24) & 0xFF);
	}

}

package io.github.ratelimit.sample;

import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;

import io.github.ratelimit.testing.RateLimitTestClock;
import io.github.ratelimit.testing.ResetRateLimits;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.context.TestConfiguration;
import org.springframework.boot.test.web.server.LocalServerPort;
import org.springframework.context.annotation.Bean;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The sample's layered contracts at the values its {@code application.yml} configures, over HTTP, on a clock moved
 * by hand: the {@code edge} filter's 100 per second per address with bursts of 200, and the application-wide
 * {@code account} quota's 10,000 per second with bursts of 5,000.
 */
@SpringBootTest(webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT,
		properties = "ratelimit.client-ip.trusted-proxies=127.0.0.1,::1")
@ExtendWith(ResetRateLimits.class)
class SampleContractsTests {

	private final HttpClient client = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();

	@LocalServerPort
	int port;

	@Autowired
	RateLimitTestClock clock;

	@Test
	void theEdgeLetsAnAddressBurst200ThenRefills100ASecond() throws Exception {
		for (int i = 0; i < 200; i++) {
			assertThat(get("198.51.100.1").statusCode()).as("request %d of the burst", i + 1).isEqualTo(200);
		}
		HttpResponse<String> rejected = get("198.51.100.1");
		assertThat(rejected.statusCode()).isEqualTo(429);
		assertThat(rejected.body()).contains("edge");
		assertThat(rejected.headers().firstValue("Retry-After")).hasValue("1");
		assertThat(get("198.51.100.2").statusCode()).as("another address has its own burst").isEqualTo(200);
		this.clock.advance(Duration.ofMillis(9));
		assertThat(get("198.51.100.1").statusCode()).as("a token every 10 ms").isEqualTo(429);
		this.clock.advance(Duration.ofMillis(1));
		assertThat(get("198.51.100.1").statusCode()).isEqualTo(200);
		assertThat(get("198.51.100.1").statusCode()).isEqualTo(429);
		this.clock.advance(Duration.ofSeconds(1));
		assertThat(admitted("198.51.100.1", 150)).as("a second refills 100").isEqualTo(100);
	}

	@Test
	void theAccountQuotaLetsTheApplicationBurst5000ThenRefills10000ASecond() throws Exception {
		// 25 addresses of 200 each stay within their edge burst: only the account quota can stop them.
		int admitted = 0;
		for (int address = 0; address < 25; address++) {
			admitted += admitted("203.0.113." + address, 200);
		}
		assertThat(admitted).isEqualTo(5_000);
		HttpResponse<String> rejected = get("203.0.113.100");
		assertThat(rejected.statusCode()).as("a fresh address meets the spent account").isEqualTo(429);
		assertThat(rejected.body()).contains("account");
		assertThat(rejected.headers().firstValue("Retry-After")).hasValue("1");
		this.clock.advance(Duration.ofMillis(1));
		assertThat(admitted("203.0.113.101", 20)).as("10,000 a second is 10 a millisecond").isEqualTo(10);
		this.clock.advance(Duration.ofSeconds(1));
		admitted = 0;
		for (int address = 0; address < 30; address++) {
			admitted += admitted("192.0.2." + address, 200);
		}
		assertThat(admitted).as("a second refills 10,000, of which the bucket holds 5,000").isEqualTo(5_000);
	}

	private int admitted(String address, int requests) throws Exception {
		int admitted = 0;
		for (int i = 0; i < requests; i++) {
			if (get(address).statusCode() == 200) {
				admitted++;
			}
		}
		return admitted;
	}

	private HttpResponse<String> get(String address) throws Exception {
		HttpRequest request = HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + this.port + "/api/v1/unlimited"))
			.header("X-Forwarded-For", address)
			.timeout(Duration.ofSeconds(10))
			.build();
		return this.client.send(request, HttpResponse.BodyHandlers.ofString());
	}

	@TestConfiguration
	static class Clock {

		@Bean
		RateLimitTestClock rateLimitTimeSource() {
			return RateLimitTestClock.at("2030-01-01T00:00:00Z");
		}

	}

}

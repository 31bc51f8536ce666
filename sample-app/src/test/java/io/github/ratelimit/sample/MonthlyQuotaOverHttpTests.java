package io.github.ratelimit.sample;

import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.time.Instant;

import org.junit.jupiter.api.Test;

import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.web.server.LocalServerPort;
import org.springframework.context.annotation.Import;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * {@code /api/v1/monthly-reports} over real HTTP: 20 a calendar month in Berlin, on the sample's still clock (10
 * seconds past midnight UTC on 1 January 2030, 01:00:10 in Berlin), so that the headers count down to midnight on
 * 1 February in Berlin, 23:00 UTC on 31 January.
 */
@Import(SampleApplicationTests.StillClock.class)
@SpringBootTest(webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT,
		properties = { "spring.data.redis.port=" + SampleApplicationTests.NO_REDIS, "ratelimit.filters.edge.enabled=false",
				"ratelimit.client-ip.trusted-proxies=127.0.0.1/32" })
class MonthlyQuotaOverHttpTests {

	private static final long UNTIL_FEBRUARY_IN_BERLIN = Duration
		.between(Instant.parse("2030-01-01T00:00:10Z"), Instant.parse("2030-01-31T23:00:00Z"))
		.toSeconds();

	private final HttpClient client = HttpClient.newHttpClient();

	@LocalServerPort
	private int port;

	@Test
	void aMonthlyQuotaCountsDownToTheFirstOfTheNextMonthInBerlin() throws Exception {
		for (int remaining = 19; remaining >= 0; remaining--) {
			HttpResponse<String> admitted = report("198.51.100.40");
			assertThat(admitted.statusCode()).isEqualTo(200);
			assertThat(admitted.headers().firstValue("RateLimit-Remaining")).hasValue(Integer.toString(remaining));
			assertThat(admitted.headers().firstValue("RateLimit-Reset"))
				.hasValue(Long.toString(UNTIL_FEBRUARY_IN_BERLIN));
		}
		HttpResponse<String> rejected = report("198.51.100.40");
		assertThat(rejected.statusCode()).isEqualTo(429);
		assertThat(rejected.headers().firstValue("Retry-After")).hasValue(Long.toString(UNTIL_FEBRUARY_IN_BERLIN));
		assertThat(rejected.body()).contains("\"violated-policies\":[\"monthly-reports\"]");
		assertThat(report("198.51.100.41").statusCode()).as("another client's month").isEqualTo(200);
	}

	private HttpResponse<String> report(String client) throws Exception {
		URI uri = URI.create("http://127.0.0.1:" + this.port + "/api/v1/monthly-reports");
		return this.client.send(HttpRequest.newBuilder(uri).header("X-Forwarded-For", client).build(),
				HttpResponse.BodyHandlers.ofString());
	}

}

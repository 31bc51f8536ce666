package io.github.ratelimit.sample.grpc;

import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicReference;

import com.google.protobuf.InvalidProtocolBufferException;
import com.google.rpc.RetryInfo;
import io.github.ratelimit.sample.grpc.quotes.Price;
import io.github.ratelimit.sample.grpc.quotes.PricesRequest;
import io.github.ratelimit.sample.grpc.quotes.QuoteRequest;
import io.github.ratelimit.sample.grpc.quotes.QuotesGrpc;
import io.grpc.Metadata;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import io.grpc.protobuf.StatusProto;
import io.grpc.stub.MetadataUtils;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowableOfType;

/**
 * The sample as a user runs it, called by a real gRPC client over a real port: the limits of application.yml, the
 * rejection with its {@code RetryInfo}, the rate-limit fields as response headers, and the same actuator endpoint as
 * the HTTP samples', over HTTP.
 */
class SampleGrpcApplicationTests {

	private static final Metadata.Key<String> RATE_LIMIT = Metadata.Key.of("ratelimit",
			Metadata.ASCII_STRING_MARSHALLER);

	private static SampleGrpcServer server;

	@BeforeAll
	static void start() {
		server = SampleGrpcServer.start("--ratelimit.policies.quotes.window=1h", "--ratelimit.policies.prices.window=1h",
				"--management.endpoints.web.exposure.include=ratelimits");
	}

	@AfterAll
	static void stop() throws InterruptedException {
		server.close();
	}

	@Test
	void aClientGetsFiveQuotesThenResourceExhaustedWithARetryDelay() throws InvalidProtocolBufferException {
		AtomicReference<Metadata> headers = new AtomicReference<>();
		AtomicReference<Metadata> trailers = new AtomicReference<>();
		QuotesGrpc.QuotesBlockingStub quotes = QuotesGrpc.newBlockingStub(server.channel)
			.withInterceptors(MetadataUtils.newCaptureMetadataInterceptor(headers, trailers));
		for (int i = 0; i < 5; i++) {
			assertThat(quotes.getQuote(QuoteRequest.newBuilder().setSymbol("ACME").build()).getPriceCents())
				.isPositive();
			assertThat(headers.get().get(RATE_LIMIT)).startsWith("\"quotes\";r=" + (4 - i) + ";t=");
		}
		StatusRuntimeException refused = catchThrowableOfType(StatusRuntimeException.class,
				() -> quotes.getQuote(QuoteRequest.newBuilder().setSymbol("ACME").build()));
		assertThat(refused.getStatus().getCode()).isEqualTo(Status.Code.RESOURCE_EXHAUSTED);
		assertThat(refused.getStatus().getDescription()).startsWith("Rate limit of policy 'quotes' exceeded");
		com.google.rpc.Status status = StatusProto.fromThrowable(refused);
		assertThat(status.getDetailsList()).anyMatch((detail) -> detail.is(RetryInfo.class));
		RetryInfo retry = status.getDetailsList()
			.stream()
			.filter((detail) -> detail.is(RetryInfo.class))
			.findFirst()
			.orElseThrow()
			.unpack(RetryInfo.class);
		assertThat(retry.getRetryDelay().getSeconds()).isBetween(1L, 3600L);
	}

	@Test
	void aStreamOfPricesCostsTheTicksItAsksFor() {
		QuotesGrpc.QuotesBlockingStub quotes = QuotesGrpc.newBlockingStub(server.channel);
		assertThat(prices(quotes, 60)).hasSize(60);
		assertThat(prices(quotes, 40)).hasSize(40);
		StatusRuntimeException refused = catchThrowableOfType(StatusRuntimeException.class, () -> prices(quotes, 1));
		assertThat(refused.getStatus().getCode()).isEqualTo(Status.Code.RESOURCE_EXHAUSTED);
	}

	@Test
	void theActuatorEndpointListsTheGrpcMethodsPolicies() throws Exception {
		HttpResponse<String> response = HttpClient.newHttpClient()
			.send(HttpRequest
				.newBuilder(URI.create("http://127.0.0.1:" + server.httpPort() + "/actuator/ratelimits"))
				.timeout(Duration.ofSeconds(10))
				.build(), HttpResponse.BodyHandlers.ofString());
		assertThat(response.statusCode()).isEqualTo(200);
		assertThat(response.body()).contains("\"quotes\"").contains("\"prices\"");
	}

	private static List<Price> prices(QuotesGrpc.QuotesBlockingStub quotes, int ticks) {
		List<Price> prices = new ArrayList<>();
		quotes.streamPrices(PricesRequest.newBuilder().setSymbol("ACME").setTicks(ticks).build())
			.forEachRemaining(prices::add);
		return prices;
	}

}

package io.github.ratelimit.test;

import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;

import org.junit.jupiter.api.Test;
import reactor.core.publisher.Mono;
import reactor.core.scheduler.Schedulers;
import reactor.netty.DisposableServer;
import reactor.netty.http.server.HttpServer;

import static org.assertj.core.api.Assertions.assertThatCode;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;

class NoBlockingOnEventLoopsTests {

	private final NoBlockingOnEventLoops extension = new NoBlockingOnEventLoops();

	@Test
	void aTestDuringWhichAThreadThatMustNotBlockSleptFailsNamingTheCallAndTheThread() {
		this.extension.beforeAll(null);
		this.extension.beforeEach(null);
		Mono.fromRunnable(() -> sleep()).subscribeOn(Schedulers.parallel()).block(Duration.ofSeconds(5));
		assertThatExceptionOfType(AssertionError.class).isThrownBy(() -> this.extension.afterEach(null))
			.withMessageContaining("1 blocking call(s)")
			.withMessageContaining("sleep")
			.withMessageContaining("parallel-");
		assertThatCode(() -> this.extension.afterEach(null)).as("reported once").doesNotThrowAnyException();
	}

	@Test
	void aTestDuringWhichAReactorNettyEventLoopSleptFails() throws Exception {
		this.extension.beforeAll(null);
		this.extension.beforeEach(null);
		DisposableServer server = HttpServer.create()
			.host("127.0.0.1")
			.port(0)
			.handle((request, response) -> {
				sleep();
				return response.sendString(Mono.just("slept on " + Thread.currentThread().getName()));
			})
			.bindNow();
		try {
			HttpClient.newHttpClient()
				.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + server.port() + "/")).build(),
						HttpResponse.BodyHandlers.discarding());
		}
		finally {
			server.disposeNow();
		}
		assertThatExceptionOfType(AssertionError.class).isThrownBy(() -> this.extension.afterEach(null))
			.withMessageContaining("sleep")
			.withMessageContaining("reactor-http");
	}

	@Test
	void whatBlockedBeforeATestIsNotItsOwn() {
		this.extension.beforeAll(null);
		Mono.fromRunnable(() -> sleep()).subscribeOn(Schedulers.parallel()).block(Duration.ofSeconds(5));
		this.extension.beforeEach(null);
		assertThatCode(() -> this.extension.afterEach(null)).doesNotThrowAnyException();
	}

	@Test
	void aThreadThatMayBlockIsNotWatched() {
		this.extension.beforeAll(null);
		Mono.fromRunnable(() -> sleep()).subscribeOn(Schedulers.boundedElastic()).block(Duration.ofSeconds(5));
		assertThatCode(() -> this.extension.afterEach(null)).doesNotThrowAnyException();
	}

	private static void sleep() {
		try {
			Thread.sleep(1);
		}
		catch (InterruptedException ex) {
			Thread.currentThread().interrupt();
		}
	}

}

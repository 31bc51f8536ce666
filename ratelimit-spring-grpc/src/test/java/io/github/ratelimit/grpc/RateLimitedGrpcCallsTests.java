package io.github.ratelimit.grpc;

import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;

import com.google.protobuf.InvalidProtocolBufferException;
import com.google.rpc.QuotaFailure;
import com.google.rpc.RetryInfo;
import io.github.ratelimit.grpc.test.GreeterGrpc;
import io.github.ratelimit.grpc.test.HelloReply;
import io.github.ratelimit.grpc.test.HelloRequest;
import io.grpc.ManagedChannel;
import io.grpc.Channel;
import io.grpc.ClientInterceptors;
import io.grpc.Context;
import io.grpc.Metadata;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import io.grpc.protobuf.StatusProto;
import io.grpc.stub.MetadataUtils;
import io.grpc.stub.StreamObserver;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

import org.springframework.context.ConfigurableApplicationContext;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;

/**
 * A gRPC application (not a web one) on a real port, called by a real gRPC client: each kind of call is limited, a
 * rejection is {@code RESOURCE_EXHAUSTED} with {@code RetryInfo} and {@code QuotaFailure}, the rate-limit fields are
 * response headers, and what counts by outcome counts from the call's status.
 */
class RateLimitedGrpcCallsTests {

	private static final Metadata.Key<String> RATE_LIMIT = Metadata.Key.of("ratelimit",
			Metadata.ASCII_STRING_MARSHALLER);

	private static final Metadata.Key<String> RATE_LIMIT_POLICY = Metadata.Key.of("ratelimit-policy",
			Metadata.ASCII_STRING_MARSHALLER);

	private static final Metadata.Key<String> RETRY_AFTER = Metadata.Key.of("retry-after",
			Metadata.ASCII_STRING_MARSHALLER);

	static final Metadata.Key<String> FORWARDED_FOR = Metadata.Key.of("x-forwarded-for",
			Metadata.ASCII_STRING_MARSHALLER);

	private static final Metadata.Key<String> API_KEY = Metadata.Key.of("x-api-key", Metadata.ASCII_STRING_MARSHALLER);

	private static ConfigurableApplicationContext app;

	private static ManagedChannel channel;

	@BeforeAll
	static void start() {
		app = GreeterApplication.run("--ratelimit.headers.style=draft-11");
		channel = GreeterApplication.channel(app);
	}

	@AfterAll
	static void stop() throws InterruptedException {
		channel.shutdownNow().awaitTermination(5, TimeUnit.SECONDS);
		app.close();
	}

	@Test
	void aUnaryCallOverItsKeysLimitIsRefusedWithResourceExhaustedRetryInfoAndQuotaFailure() {
		AtomicReference<Metadata> headers = new AtomicReference<>();
		AtomicReference<Metadata> trailers = new AtomicReference<>();
		GreeterGrpc.GreeterBlockingStub stub = GreeterGrpc.newBlockingStub(channel)
			.withInterceptors(MetadataUtils.newCaptureMetadataInterceptor(headers, trailers));
		GreeterApplication.GreeterService service = app.getBean(GreeterApplication.GreeterService.class);
		int seen = service.hellos.get();
		for (int i = 0; i < 3; i++) {
			assertThat(stub.sayHello(hello("ada")).getMessage()).isEqualTo("Hello ada");
			assertThat(headers.get().get(RATE_LIMIT)).matches("\"hellos\";r=" + (2 - i) + ";t=\\d+");
		}
		assertThat(headers.get().get(RATE_LIMIT_POLICY)).isEqualTo("\"hellos\";q=3;w=3600");
		StatusRuntimeException refused = refusal(() -> stub.sayHello(hello("ada")));
		assertThat(refused.getStatus().getCode()).isEqualTo(Status.Code.RESOURCE_EXHAUSTED);
		assertThat(refused.getStatus().getDescription()).contains("hellos");
		// The fields are response headers, as the draft wants, not trailers.
		assertThat(headers.get().get(RATE_LIMIT)).matches("\"hellos\";r=0;t=\\d+");
		assertThat(trailers.get().get(RATE_LIMIT)).isNull();
		com.google.rpc.Status details = StatusProto.fromThrowable(refused);
		assertThat(details).isNotNull();
		assertThat(unpack(details, RetryInfo.class).getRetryDelay().getSeconds()).isBetween(1L, 3600L)
			.isEqualTo(Long.parseLong(headers.get().get(RETRY_AFTER)));
		assertThat(unpack(details, QuotaFailure.class).getViolations(0).getSubject()).isEqualTo("policy:hellos");
		assertThat(service.hellos.get()).as("the service never saw the refused call").isEqualTo(seen + 3);
		// Another key has its own quota.
		assertThat(stub.sayHello(hello("grace")).getMessage()).isEqualTo("Hello grace");
	}

	@Test
	void aServerStreamingCallIsKeyedByTheMetadataCostsWhatItsMessageAsksAndIsRefusedBeforeItStreams() {
		Metadata metadata = new Metadata();
		metadata.put(API_KEY, "key-1");
		GreeterGrpc.GreeterBlockingStub stub = GreeterGrpc.newBlockingStub(channel)
			.withInterceptors(MetadataUtils.newAttachHeadersInterceptor(metadata));
		// Each call costs the replies it asks for: 20 of them an hour.
		for (int i = 0; i < 2; i++) {
			assertThat(drain(stub.streamHellos(HelloRequest.newBuilder().setCount(8).build()))).hasSize(8);
		}
		StatusRuntimeException refused = refusal(
				() -> drain(stub.streamHellos(HelloRequest.newBuilder().setCount(8).build())));
		assertThat(refused.getStatus().getCode()).isEqualTo(Status.Code.RESOURCE_EXHAUSTED);
		assertThat(drain(stub.streamHellos(HelloRequest.newBuilder().setCount(4).build()))).hasSize(4);
		// A count below one is no cost at all: the call is invalid, and nothing is counted.
		assertThat(refusal(() -> drain(stub.streamHellos(HelloRequest.newBuilder().setCount(-5).build())))
			.getStatus()
			.getCode()).isEqualTo(Status.Code.INVALID_ARGUMENT);
		Metadata otherKey = new Metadata();
		otherKey.put(API_KEY, "key-2");
		assertThat(drain(GreeterGrpc.newBlockingStub(channel)
			.withInterceptors(MetadataUtils.newAttachHeadersInterceptor(otherKey))
			.streamHellos(HelloRequest.newBuilder().setCount(1).build()))).hasSize(1);
	}

	@Test
	void aClientStreamingCallIsDecidedAsItStartsAndARefusedOneNeverReachesTheService() throws Exception {
		GreeterApplication.GreeterService service = app.getBean(GreeterApplication.GreeterService.class);
		int started = service.collections.get();
		assertThat(collect(channel, "a", "b").get()).isEqualTo("Hello ab");
		// Keyed by the client's address: a forged X-Forwarded-For from an untrusted peer buys no fresh quota.
		Metadata forged = new Metadata();
		forged.put(FORWARDED_FOR, "203.0.113.9");
		AtomicReference<Object> second = collect(ClientInterceptors.intercept(channel,
				MetadataUtils.newAttachHeadersInterceptor(forged)), "c");
		assertThat(second.get()).isInstanceOfSatisfying(StatusRuntimeException.class,
				(refused) -> assertThat(refused.getStatus().getCode()).isEqualTo(Status.Code.RESOURCE_EXHAUSTED));
		assertThat(service.collections.get()).isEqualTo(started + 1);
	}

	@Test
	void aPolicyCountingFailuresCountsOnlyTheCallsThatEndedInOne() {
		GreeterGrpc.GreeterBlockingStub stub = GreeterGrpc.newBlockingStub(channel);
		for (int i = 0; i < 5; i++) {
			assertThat(stub.login(hello("ada")).getMessage()).isEqualTo("Welcome ada");
		}
		for (int i = 0; i < 2; i++) {
			assertThat(refusal(() -> stub.login(hello("intruder"))).getStatus().getCode())
				.isEqualTo(Status.Code.UNAUTHENTICATED);
		}
		// Two failures (UNAUTHENTICATED is 401) spent the quota: now even a good login is refused.
		assertThat(refusal(() -> stub.login(hello("ada"))).getStatus().getCode())
			.isEqualTo(Status.Code.RESOURCE_EXHAUSTED);
	}

	@Test
	void aConcurrencyLimitHoldsItsSlotWhileTheCallStreamsAndGivesItBackWhenItEndsOrIsCancelled() throws Exception {
		GreeterApplication.GreeterService service = app.getBean(GreeterApplication.GreeterService.class);
		service.renderGoesOn = new CountDownLatch(1);
		Iterator<HelloReply> first = GreeterGrpc.newBlockingStub(channel).render(hello("one"));
		assertThat(first.next().getMessage()).isEqualTo("rendering");
		StatusRuntimeException refused = refusal(() -> drain(GreeterGrpc.newBlockingStub(channel).render(hello("two"))));
		assertThat(refused.getStatus().getCode()).isEqualTo(Status.Code.RESOURCE_EXHAUSTED);
		com.google.rpc.Status details = StatusProto.fromThrowable(refused);
		assertThat(details.getDetailsList()).as("no time to retry at, as on HTTP")
			.noneMatch((detail) -> detail.is(RetryInfo.class));
		service.renderGoesOn.countDown();
		assertThat(drain(first)).extracting(HelloReply::getMessage).containsExactly("rendered");
		awaitRendering("three");

		// A client that cancels gives its slot back as well.
		service.renderGoesOn = new CountDownLatch(1);
		Context.CancellableContext cancellable = Context.current().withCancellation();
		Iterator<HelloReply> cancelled = cancellable
			.call(() -> GreeterGrpc.newBlockingStub(channel).render(hello("four")));
		assertThat(cancelled.next().getMessage()).isEqualTo("rendering");
		cancellable.cancel(null);
		service.renderGoesOn.countDown();
		awaitRendering("five");
	}

	/** A render admitted once the slot is given back, which the store is told without waiting. */
	private static void awaitRendering(String name) throws InterruptedException {
		long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
		while (true) {
			try {
				assertThat(drain(GreeterGrpc.newBlockingStub(channel).render(hello(name)))).hasSize(2);
				return;
			}
			catch (StatusRuntimeException ex) {
				assertThat(ex.getStatus().getCode()).isEqualTo(Status.Code.RESOURCE_EXHAUSTED);
				assertThat(System.nanoTime()).as("the slot is given back").isLessThan(deadline);
				Thread.sleep(20);
			}
		}
	}

	@Test
	void aServiceThatThrowsGivesItsSlotBackAndItsCallEndsWithWhatItThrew() {
		GreeterGrpc.GreeterBlockingStub stub = GreeterGrpc.newBlockingStub(channel);
		// One slot, held an hour: were the first failure to keep it, the second call would be refused.
		for (int i = 0; i < 3; i++) {
			assertThat(refusal(() -> stub.fail(hello("ada"))).getStatus().getCode()).isEqualTo(Status.Code.UNKNOWN);
			assertThat(refusal(() -> stub.fail(hello("status"))).getStatus().getCode())
				.isEqualTo(Status.Code.NOT_FOUND);
		}
	}

	@Test
	void aMethodWithoutLimitsIsLeftAlone() {
		AtomicReference<Metadata> headers = new AtomicReference<>();
		AtomicReference<Metadata> trailers = new AtomicReference<>();
		GreeterGrpc.GreeterBlockingStub stub = GreeterGrpc.newBlockingStub(channel)
			.withInterceptors(MetadataUtils.newCaptureMetadataInterceptor(headers, trailers));
		for (int i = 0; i < 10; i++) {
			assertThat(refusal(() -> stub.unlimited(hello("ada"))).getStatus().getCode())
				.isEqualTo(Status.Code.UNIMPLEMENTED);
		}
		assertThat(trailers.get().get(RATE_LIMIT)).isNull();
	}

	static AtomicReference<Object> collect(Channel channel, String... names) throws InterruptedException {
		AtomicReference<Object> result = new AtomicReference<>();
		CountDownLatch done = new CountDownLatch(1);
		StreamObserver<HelloRequest> requests = GreeterGrpc.newStub(channel).collectHellos(new StreamObserver<>() {

			@Override
			public void onNext(HelloReply value) {
				result.set(value.getMessage());
			}

			@Override
			public void onError(Throwable t) {
				result.set(t);
				done.countDown();
			}

			@Override
			public void onCompleted() {
				done.countDown();
			}

		});
		for (String name : names) {
			requests.onNext(hello(name));
		}
		requests.onCompleted();
		assertThat(done.await(10, TimeUnit.SECONDS)).isTrue();
		return result;
	}

	private static HelloRequest hello(String name) {
		return HelloRequest.newBuilder().setName(name).build();
	}

	private static List<HelloReply> drain(Iterator<HelloReply> replies) {
		List<HelloReply> all = new ArrayList<>();
		replies.forEachRemaining(all::add);
		return all;
	}

	private static StatusRuntimeException refusal(Runnable call) {
		AtomicReference<StatusRuntimeException> refused = new AtomicReference<>();
		assertThatExceptionOfType(StatusRuntimeException.class).isThrownBy(call::run).satisfies(refused::set);
		return refused.get();
	}

	private static <T extends com.google.protobuf.Message> T unpack(com.google.rpc.Status status, Class<T> type) {
		return status.getDetailsList().stream().filter((detail) -> detail.is(type)).findFirst().map((detail) -> {
			try {
				return detail.unpack(type);
			}
			catch (InvalidProtocolBufferException ex) {
				throw new IllegalStateException(ex);
			}
		}).orElseThrow();
	}

}

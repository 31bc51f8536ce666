package io.github.ratelimit.grpc;

import java.util.Map;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

import io.github.ratelimit.Algorithm;
import io.github.ratelimit.annotation.RateLimited;
import io.github.ratelimit.grpc.test.GreeterGrpc;
import io.github.ratelimit.grpc.test.HelloReply;
import io.github.ratelimit.grpc.test.HelloRequest;
import io.grpc.Grpc;
import io.grpc.InsecureChannelCredentials;
import io.grpc.ManagedChannel;
import io.grpc.Status;
import io.grpc.stub.StreamObserver;

import org.springframework.boot.SpringApplication;
import org.springframework.boot.SpringBootConfiguration;
import org.springframework.boot.WebApplicationType;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.context.ApplicationListener;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.context.annotation.Import;
import org.springframework.grpc.server.lifecycle.GrpcServerStartedEvent;

/** A gRPC application, not a web one, whose service limits each kind of call. */
@SpringBootConfiguration
@EnableAutoConfiguration
@Import(GreeterApplication.GreeterService.class)
class GreeterApplication {

	/** Run the application on a free port of the loopback interface, in memory, with these arguments. */
	static ConfigurableApplicationContext run(String... arguments) {
		return run(GreeterApplication.class, arguments);
	}

	/** Run an application of these sources as {@link #run(String...)} does. */
	static ConfigurableApplicationContext run(Class<?> source, String... arguments) {
		GrpcPort port = new GrpcPort();
		SpringApplication application = new SpringApplication(source);
		application.setWebApplicationType(WebApplicationType.NONE);
		application.addListeners(port);
		// In memory unless told otherwise: Redis is on the test class path, and a Redis may run on this machine.
		application.setDefaultProperties(Map.of("spring.grpc.server.port", "0", "spring.grpc.server.address",
				"127.0.0.1", "ratelimit.store", "memory"));
		ConfigurableApplicationContext context = application.run(arguments);
		context.getBeanFactory().registerSingleton("grpcPort", port);
		return context;
	}

	/** A plain-text channel to the application's gRPC server. */
	static ManagedChannel channel(ConfigurableApplicationContext context) {
		int port = context.getBean(GrpcPort.class).port;
		return Grpc.newChannelBuilderForAddress("127.0.0.1", port, InsecureChannelCredentials.create()).build();
	}

	/** The port the server listens on, once it started. */
	static final class GrpcPort implements ApplicationListener<GrpcServerStartedEvent> {

		volatile int port;

		@Override
		public void onApplicationEvent(GrpcServerStartedEvent event) {
			this.port = event.getPort();
		}

	}

	static class GreeterService extends GreeterGrpc.GreeterImplBase {

		/** How many calls the service itself saw, by method. */
		final AtomicInteger hellos = new AtomicInteger();

		final AtomicInteger collections = new AtomicInteger();

		@Override
		@RateLimited(name = "hellos", limit = 3, window = "1h", key = "#request.name")
		public void sayHello(HelloRequest request, StreamObserver<HelloReply> responseObserver) {
			this.hellos.incrementAndGet();
			if (request.getName().equals("intruder")) {
				responseObserver.onError(Status.UNAUTHENTICATED.withDescription("who are you").asRuntimeException());
				return;
			}
			responseObserver.onNext(HelloReply.newBuilder().setMessage("Hello " + request.getName()).build());
			responseObserver.onCompleted();
		}

		@Override
		@RateLimited(name = "streams", limit = 20, window = "1h", key = "#metadata['x-api-key']",
				cost = "#request.count")
		public void streamHellos(HelloRequest request, StreamObserver<HelloReply> responseObserver) {
			for (int i = 0; i < request.getCount(); i++) {
				responseObserver.onNext(HelloReply.newBuilder().setMessage("Hello " + i).build());
			}
			responseObserver.onCompleted();
		}

		@Override
		@RateLimited(name = "collections", limit = 1, window = "1h")
		public StreamObserver<HelloRequest> collectHellos(StreamObserver<HelloReply> responseObserver) {
			this.collections.incrementAndGet();
			return new StreamObserver<>() {

				private final StringBuilder names = new StringBuilder();

				@Override
				public void onNext(HelloRequest value) {
					this.names.append(value.getName());
				}

				@Override
				public void onError(Throwable t) {
				}

				@Override
				public void onCompleted() {
					responseObserver.onNext(HelloReply.newBuilder().setMessage("Hello " + this.names).build());
					responseObserver.onCompleted();
				}

			};
		}

		/** Released by the test: a render streams its first reply, then waits for it. */
		volatile CountDownLatch renderGoesOn = new CountDownLatch(0);

		@Override
		@RateLimited(name = "renders", algorithm = Algorithm.CONCURRENCY, limit = 1, hold = "1m", key = "'all'")
		public void render(HelloRequest request, StreamObserver<HelloReply> responseObserver) {
			responseObserver.onNext(HelloReply.newBuilder().setMessage("rendering").build());
			try {
				this.renderGoesOn.await(30, TimeUnit.SECONDS);
			}
			catch (InterruptedException ex) {
				Thread.currentThread().interrupt();
			}
			responseObserver.onNext(HelloReply.newBuilder().setMessage("rendered").build());
			responseObserver.onCompleted();
		}

		/** Throws, as a service does on input it did not expect: Spring gRPC's exception handler answers. */
		@Override
		@RateLimited(name = "failures", algorithm = Algorithm.CONCURRENCY, limit = 1, hold = "1h", key = "'all'")
		public void fail(HelloRequest request, StreamObserver<HelloReply> responseObserver) {
			if (request.getName().equals("status")) {
				throw Status.NOT_FOUND.withDescription("no such greeting").asRuntimeException();
			}
			throw new IllegalArgumentException("cannot greet " + request.getName());
		}

		@Override
		@RateLimited(name = "logins", limit = 2, window = "1h", key = "'all'", countOn = "4xx")
		public void login(HelloRequest request, StreamObserver<HelloReply> responseObserver) {
			if (request.getName().equals("intruder")) {
				responseObserver.onError(Status.UNAUTHENTICATED.withDescription("who are you").asRuntimeException());
				return;
			}
			responseObserver.onNext(HelloReply.newBuilder().setMessage("Welcome " + request.getName()).build());
			responseObserver.onCompleted();
		}

	}

}

package io.github.ratelimit.sample.grpc;

import java.util.concurrent.TimeUnit;

import io.grpc.Grpc;
import io.grpc.InsecureChannelCredentials;
import io.grpc.ManagedChannel;

import org.springframework.boot.SpringApplication;
import org.springframework.context.ApplicationListener;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.grpc.server.lifecycle.GrpcServerStartedEvent;

/** The sample run as a user runs it, on free ports of the loopback interface, and a channel to its gRPC server. */
final class SampleGrpcServer implements AutoCloseable {

	final ConfigurableApplicationContext context;

	final ManagedChannel channel;

	private SampleGrpcServer(ConfigurableApplicationContext context, ManagedChannel channel) {
		this.context = context;
		this.channel = channel;
	}

	static SampleGrpcServer start(String... arguments) {
		StartedPort port = new StartedPort();
		SpringApplication application = new SpringApplication(SampleGrpcApplication.class);
		application.addListeners(port);
		String[] all = new String[arguments.length + 3];
		all[0] = "--server.port=0";
		all[1] = "--spring.grpc.server.port=0";
		all[2] = "--spring.grpc.server.address=127.0.0.1";
		System.arraycopy(arguments, 0, all, 3, arguments.length);
		ConfigurableApplicationContext context = application.run(all);
		return new SampleGrpcServer(context,
				Grpc.newChannelBuilderForAddress("127.0.0.1", port.port, InsecureChannelCredentials.create()).build());
	}

	String httpPort() {
		return this.context.getEnvironment().getProperty("local.server.port");
	}

	@Override
	public void close() throws InterruptedException {
		this.channel.shutdownNow().awaitTermination(5, TimeUnit.SECONDS);
		this.context.close();
	}

	private static final class StartedPort implements ApplicationListener<GrpcServerStartedEvent> {

		private volatile int port;

		@Override
		public void onApplicationEvent(GrpcServerStartedEvent event) {
			this.port = event.getPort();
		}

	}

}

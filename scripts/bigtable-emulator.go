// A Cloud Bigtable emulator built from Debian's golang-google-cloud-dev (the bttest
// package), for machines without Google's cbtemulator. Same flags as cbtemulator
// (-host, -port); prints "listening on HOST:PORT" once it serves. Handler panics (bttest
// leaves some methods unimplemented) become gRPC errors instead of killing the process.
// Built offline by scripts/build-bigtable-emulator.sh.
package main

import (
	"context"
	"flag"
	"fmt"
	"log"
	"os"
	"os/signal"
	"syscall"

	"cloud.google.com/go/bigtable/bttest"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

func unaryRecover(ctx context.Context, req interface{}, info *grpc.UnaryServerInfo, h grpc.UnaryHandler) (resp interface{}, err error) {
	defer func() {
		if r := recover(); r != nil {
			err = status.Errorf(codes.Unimplemented, "%s: %v", info.FullMethod, r)
		}
	}()
	return h(ctx, req)
}

func streamRecover(srv interface{}, ss grpc.ServerStream, info *grpc.StreamServerInfo, h grpc.StreamHandler) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = status.Errorf(codes.Unimplemented, "%s: %v", info.FullMethod, r)
		}
	}()
	return h(srv, ss)
}

func main() {
	host := flag.String("host", "localhost", "the address to bind to on the local machine")
	port := flag.Int("port", 9000, "the port number to bind to on the local machine")
	flag.Parse()
	srv, err := bttest.NewServer(fmt.Sprintf("%s:%d", *host, *port),
		grpc.MaxRecvMsgSize(256<<20), grpc.MaxSendMsgSize(256<<20),
		grpc.UnaryInterceptor(unaryRecover), grpc.StreamInterceptor(streamRecover))
	if err != nil {
		log.Fatalf("failed to start emulator: %v", err)
	}
	fmt.Printf("Cloud Bigtable emulator (bttest) listening on %s\n", srv.Addr)
	sig := make(chan os.Signal, 1)
	signal.Notify(sig, syscall.SIGINT, syscall.SIGTERM)
	<-sig
	srv.Close()
}

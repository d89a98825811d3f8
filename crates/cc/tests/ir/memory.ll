; ModuleID = '-'
source_filename = "-"
target datalayout = "e-m:e-p:16:16-i32:16-i64:16-f32:16-f64:16-a:8-n8:16-S16"
target triple = "msp430"

%struct.pt = type { i16, i8, i32 }

@.str = private unnamed_addr constant [5 x i8] c"zero\00", align 1
@.str.1 = private unnamed_addr constant [4 x i8] c"one\00", align 1
@.str.2 = private unnamed_addr constant [4 x i8] c"two\00", align 1
@names = dso_local local_unnamed_addr global [3 x i8*] [i8* getelementptr inbounds ([5 x i8], [5 x i8]* @.str, i32 0, i32 0), i8* getelementptr inbounds ([4 x i8], [4 x i8]* @.str.1, i32 0, i32 0), i8* getelementptr inbounds ([4 x i8], [4 x i8]* @.str.2, i32 0, i32 0)], align 2
@counter = dso_local local_unnamed_addr global i16 7, align 2
@pts = internal unnamed_addr global [3 x %struct.pt] [%struct.pt { i16 1, i8 97, i32 100000 }, %struct.pt { i16 -2, i8 98, i32 -5 }, %struct.pt { i16 3, i8 99, i32 7 }], align 2
@msg = internal constant [12 x i8] c"hello, cahp\00", align 1
@table = internal unnamed_addr constant [8 x i16] [i16 3, i16 1, i16 4, i16 1, i16 5, i16 9, i16 2, i16 6], align 2
@zeros = internal unnamed_addr global [5 x i16] zeroinitializer, align 2

; Function Attrs: minsize nofree nosync nounwind optsize
define dso_local i16 @main(i16 noundef %0, i8** nocapture noundef readonly %1) local_unnamed_addr #0 {
  %3 = alloca [3 x %struct.pt], align 2
  %4 = alloca [8 x i16], align 2
  %5 = alloca [16 x i8], align 1
  %6 = getelementptr inbounds i8*, i8** %1, i16 1
  %7 = load i8*, i8** %6, align 2, !tbaa !2
  %8 = tail call fastcc i16 @num(i8* noundef %7) #3
  %9 = getelementptr inbounds i8*, i8** %1, i16 2
  %10 = load i8*, i8** %9, align 2, !tbaa !2
  %11 = tail call fastcc i16 @num(i8* noundef %10) #3
  %12 = mul i16 %8, 3
  %13 = add i16 %12, 132
  %14 = add i16 %13, %11
  %15 = sext i16 %8 to i32
  br label %16

16:                                               ; preds = %22, %2
  %17 = phi i16 [ 0, %2 ], [ %38, %22 ]
  %18 = phi i16 [ %14, %2 ], [ %37, %22 ]
  %19 = icmp eq i16 %17, 3
  br i1 %19, label %20, label %22

20:                                               ; preds = %16
  %21 = bitcast [3 x %struct.pt]* %3 to i8*
  call void @llvm.lifetime.start.p0i8(i64 24, i8* nonnull %21) #4
  br label %39

22:                                               ; preds = %16
  %23 = getelementptr inbounds [3 x %struct.pt], [3 x %struct.pt]* @pts, i16 0, i16 %17, i32 0
  %24 = load i16, i16* %23, align 2, !tbaa !6
  %25 = add nsw i16 %24, %8
  store i16 %25, i16* %23, align 2, !tbaa !6
  %26 = getelementptr inbounds [3 x %struct.pt], [3 x %struct.pt]* @pts, i16 0, i16 %17, i32 2
  %27 = load i32, i32* %26, align 2, !tbaa !10
  %28 = sub nsw i32 %27, %15
  store i32 %28, i32* %26, align 2, !tbaa !10
  %29 = mul i16 %18, 31
  %30 = mul nsw i16 %25, 3
  %31 = getelementptr inbounds [3 x %struct.pt], [3 x %struct.pt]* @pts, i16 0, i16 %17, i32 1
  %32 = load i8, i8* %31, align 2, !tbaa !11
  %33 = sext i8 %32 to i16
  %34 = trunc i32 %28 to i16
  %35 = add i16 %30, %29
  %36 = add i16 %35, %34
  %37 = add i16 %36, %33
  %38 = add nuw nsw i16 %17, 1
  br label %16, !llvm.loop !12

39:                                               ; preds = %59, %20
  %40 = phi i16 [ 0, %20 ], [ %66, %59 ]
  %41 = icmp eq i16 %40, 3
  br i1 %41, label %42, label %59

42:                                               ; preds = %39
  %43 = mul i16 %18, 31
  %44 = getelementptr inbounds [3 x %struct.pt], [3 x %struct.pt]* %3, i16 0, i16 0, i32 0
  %45 = load i16, i16* %44, align 2, !tbaa !6
  %46 = add i16 %45, %43
  %47 = getelementptr inbounds [3 x %struct.pt], [3 x %struct.pt]* %3, i16 0, i16 2, i32 1
  %48 = load i8, i8* %47, align 2, !tbaa !11
  %49 = sext i8 %48 to i16
  %50 = add i16 %46, %49
  %51 = tail call fastcc i16 @strsum(i8* noundef getelementptr inbounds ([12 x i8], [12 x i8]* @msg, i16 0, i16 0)) #3
  %52 = and i16 %11, 1
  %53 = getelementptr inbounds [3 x i8*], [3 x i8*]* @names, i16 0, i16 %52
  %54 = load i8*, i8** %53, align 2, !tbaa !2
  %55 = tail call fastcc i16 @strsum(i8* noundef %54) #3
  %56 = load i8*, i8** getelementptr inbounds ([3 x i8*], [3 x i8*]* @names, i16 0, i16 2), align 2, !tbaa !2
  %57 = tail call fastcc i16 @strsum(i8* noundef %56) #3
  %58 = bitcast [8 x i16]* %4 to i8*
  call void @llvm.lifetime.start.p0i8(i64 16, i8* nonnull %58) #4
  br label %67

59:                                               ; preds = %39
  %60 = getelementptr inbounds [3 x %struct.pt], [3 x %struct.pt]* %3, i16 0, i16 %40
  %61 = sub nuw nsw i16 2, %40
  %62 = getelementptr inbounds [3 x %struct.pt], [3 x %struct.pt]* @pts, i16 0, i16 %61
  %63 = bitcast %struct.pt* %62 to i64*
  %64 = bitcast %struct.pt* %60 to i64*
  %65 = load i64, i64* %63, align 2
  store i64 %65, i64* %64, align 2
  %66 = add nuw nsw i16 %40, 1
  br label %39, !llvm.loop !14

67:                                               ; preds = %75, %42
  %68 = phi i16 [ 0, %42 ], [ %80, %75 ]
  %69 = icmp eq i16 %68, 8
  br i1 %69, label %70, label %75

70:                                               ; preds = %67
  %71 = mul i16 %50, 31
  %72 = add i16 %71, %51
  %73 = add i16 %72, %55
  %74 = add i16 %73, %57
  br label %83

75:                                               ; preds = %67
  %76 = add nsw i16 %68, %8
  %77 = and i16 %76, 7
  %78 = getelementptr inbounds [8 x i16], [8 x i16]* @table, i16 0, i16 %77
  %79 = load i16, i16* %78, align 2, !tbaa !15
  %80 = add nuw nsw i16 %68, 1
  %81 = mul nsw i16 %79, %80
  %82 = getelementptr inbounds [8 x i16], [8 x i16]* %4, i16 0, i16 %68
  store i16 %81, i16* %82, align 2, !tbaa !15
  br label %67, !llvm.loop !16

83:                                               ; preds = %70, %98
  %84 = phi i16 [ %103, %98 ], [ 0, %70 ]
  %85 = phi i16 [ %102, %98 ], [ %74, %70 ]
  %86 = icmp eq i16 %84, 8
  br i1 %86, label %87, label %98

87:                                               ; preds = %83
  %88 = getelementptr inbounds [8 x i16], [8 x i16]* %4, i16 0, i16 5
  %89 = mul i16 %85, 31
  %90 = load i16, i16* %88, align 2, !tbaa !15
  %91 = getelementptr inbounds [8 x i16], [8 x i16]* %4, i16 0, i16 4
  %92 = load i16, i16* %91, align 2, !tbaa !15
  %93 = add i16 %89, 5
  %94 = add i16 %93, %90
  %95 = add i16 %94, %92
  %96 = and i16 %8, 3
  %97 = getelementptr inbounds [5 x i16], [5 x i16]* @zeros, i16 0, i16 %96
  store i16 %11, i16* %97, align 2, !tbaa !15
  br label %104

98:                                               ; preds = %83
  %99 = mul i16 %85, 31
  %100 = getelementptr inbounds [8 x i16], [8 x i16]* %4, i16 0, i16 %84
  %101 = load i16, i16* %100, align 2, !tbaa !15
  %102 = add i16 %101, %99
  %103 = add nuw nsw i16 %84, 1
  br label %83, !llvm.loop !17

104:                                              ; preds = %112, %87
  %105 = phi i16 [ %95, %87 ], [ %116, %112 ]
  %106 = phi i16 [ 0, %87 ], [ %117, %112 ]
  %107 = icmp eq i16 %106, 5
  br i1 %107, label %108, label %112

108:                                              ; preds = %104
  %109 = load i16, i16* @counter, align 2, !tbaa !15
  %110 = add nsw i16 %109, %8
  store i16 %110, i16* @counter, align 2, !tbaa !15
  %111 = getelementptr inbounds [16 x i8], [16 x i8]* %5, i16 0, i16 0
  call void @llvm.lifetime.start.p0i8(i64 16, i8* nonnull %111) #4
  br label %118

112:                                              ; preds = %104
  %113 = mul i16 %105, 31
  %114 = getelementptr inbounds [5 x i16], [5 x i16]* @zeros, i16 0, i16 %106
  %115 = load i16, i16* %114, align 2, !tbaa !15
  %116 = add i16 %115, %113
  %117 = add nuw nsw i16 %106, 1
  br label %104, !llvm.loop !18

118:                                              ; preds = %129, %108
  %119 = phi i16 [ 0, %108 ], [ %134, %129 ]
  %120 = icmp eq i16 %119, 16
  br i1 %120, label %121, label %129

121:                                              ; preds = %118
  %122 = mul i16 %105, 31
  %123 = add i16 %110, %122
  %124 = getelementptr inbounds [16 x i8], [16 x i8]* %5, i16 0, i16 15
  store i8 0, i8* %124, align 1, !tbaa !19
  %125 = mul i16 %123, 31
  %126 = getelementptr inbounds [16 x i8], [16 x i8]* %5, i16 0, i16 1
  %127 = call fastcc i16 @strsum(i8* noundef nonnull %126) #3
  %128 = add i16 %127, %125
  call void @llvm.lifetime.end.p0i8(i64 16, i8* nonnull %111) #4
  call void @llvm.lifetime.end.p0i8(i64 16, i8* nonnull %58) #4
  call void @llvm.lifetime.end.p0i8(i64 24, i8* nonnull %21) #4
  ret i16 %128

129:                                              ; preds = %118
  %130 = mul nsw i16 %119, %11
  %131 = trunc i16 %130 to i8
  %132 = add i8 %131, 1
  %133 = getelementptr inbounds [16 x i8], [16 x i8]* %5, i16 0, i16 %119
  store i8 %132, i8* %133, align 1, !tbaa !19
  %134 = add nuw nsw i16 %119, 1
  br label %118, !llvm.loop !20
}

; Function Attrs: argmemonly mustprogress nofree nosync nounwind willreturn
declare void @llvm.lifetime.start.p0i8(i64 immarg, i8* nocapture) #1

; Function Attrs: minsize nofree norecurse nosync nounwind optsize readonly
define internal fastcc i16 @num(i8* nocapture noundef readonly %0) unnamed_addr #2 {
  %2 = load i8, i8* %0, align 1, !tbaa !19
  %3 = icmp eq i8 %2, 45
  %4 = zext i1 %3 to i16
  %5 = getelementptr i8, i8* %0, i16 %4
  br label %6

6:                                                ; preds = %12, %1
  %7 = phi i8* [ %5, %1 ], [ %17, %12 ]
  %8 = phi i16 [ 0, %1 ], [ %16, %12 ]
  %9 = load i8, i8* %7, align 1, !tbaa !19
  %10 = add i8 %9, -48
  %11 = icmp ult i8 %10, 10
  br i1 %11, label %12, label %18

12:                                               ; preds = %6
  %13 = zext i8 %9 to i16
  %14 = mul nsw i16 %8, 10
  %15 = add i16 %14, -48
  %16 = add i16 %15, %13
  %17 = getelementptr inbounds i8, i8* %7, i16 1
  br label %6, !llvm.loop !21

18:                                               ; preds = %6
  %19 = sub nsw i16 0, %8
  %20 = select i1 %3, i16 %19, i16 %8
  ret i16 %20
}

; Function Attrs: argmemonly mustprogress nofree nosync nounwind willreturn
declare void @llvm.lifetime.end.p0i8(i64 immarg, i8* nocapture) #1

; Function Attrs: minsize nofree norecurse nosync nounwind optsize readonly
define internal fastcc i16 @strsum(i8* nocapture noundef readonly %0) unnamed_addr #2 {
  br label %2

2:                                                ; preds = %7, %1
  %3 = phi i8* [ %0, %1 ], [ %9, %7 ]
  %4 = phi i16 [ 0, %1 ], [ %11, %7 ]
  %5 = load i8, i8* %3, align 1, !tbaa !19
  %6 = icmp eq i8 %5, 0
  br i1 %6, label %12, label %7

7:                                                ; preds = %2
  %8 = mul i16 %4, 7
  %9 = getelementptr inbounds i8, i8* %3, i16 1
  %10 = zext i8 %5 to i16
  %11 = add i16 %8, %10
  br label %2, !llvm.loop !22

12:                                               ; preds = %2
  ret i16 %4
}

attributes #0 = { minsize nofree nosync nounwind optsize "frame-pointer"="none" "min-legal-vector-width"="0" "no-trapping-math"="true" "stack-protector-buffer-size"="8" }
attributes #1 = { argmemonly mustprogress nofree nosync nounwind willreturn }
attributes #2 = { minsize nofree norecurse nosync nounwind optsize readonly "frame-pointer"="none" "min-legal-vector-width"="0" "no-trapping-math"="true" "stack-protector-buffer-size"="8" }
attributes #3 = { minsize optsize }
attributes #4 = { nounwind }

!llvm.module.flags = !{!0}
!llvm.ident = !{!1}

!0 = !{i32 1, !"wchar_size", i32 2}
!1 = !{!"Debian clang version 14.0.6"}
!2 = !{!3, !3, i64 0}
!3 = !{!"any pointer", !4, i64 0}
!4 = !{!"omnipotent char", !5, i64 0}
!5 = !{!"Simple C/C++ TBAA"}
!6 = !{!7, !8, i64 0}
!7 = !{!"pt", !8, i64 0, !4, i64 2, !9, i64 4}
!8 = !{!"int", !4, i64 0}
!9 = !{!"long", !4, i64 0}
!10 = !{!7, !9, i64 4}
!11 = !{!7, !4, i64 2}
!12 = distinct !{!12, !13}
!13 = !{!"llvm.loop.mustprogress"}
!14 = distinct !{!14, !13}
!15 = !{!8, !8, i64 0}
!16 = distinct !{!16, !13}
!17 = distinct !{!17, !13}
!18 = distinct !{!18, !13}
!19 = !{!4, !4, i64 0}
!20 = distinct !{!20, !13}
!21 = distinct !{!21, !13}
!22 = distinct !{!22, !13}
